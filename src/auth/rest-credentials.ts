/** The access token saved by `chat-cli login` for a base URL, refreshed when due (stub until the auth issue lands). */

/** Returns a usable access token for `baseUrl` from the stored `chat-cli login`, or undefined when there is none. */
export async function storedAccessToken(_baseUrl: string): Promise<string | undefined> {
  return undefined;
}
