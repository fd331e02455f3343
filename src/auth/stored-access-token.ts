/** The access token saved by `chat-cli login` for a base URL, refreshed when due; cheap to import (the session loads lazily). */
import { configDir } from "../config/index.js";
import { hasStoredLogin, restServerUrl } from "./login-key.js";

/**
 * A usable access token for `baseUrl` from the login `chat-cli login` saved, or undefined when there is none.
 * Convention: the REST login is for the protected resource `restServerUrl(baseUrl)` = `${baseUrl}/v2` (the
 * resource of `/.well-known/oauth-protected-resource/v2`), with no custom headers. Never opens a browser.
 */
export async function storedAccessToken(
  baseUrl: string,
  options: { env?: NodeJS.ProcessEnv; fetch?: typeof fetch } = {},
): Promise<string | undefined> {
  const serverUrl = restServerUrl(baseUrl);
  const dir = configDir(options.env);
  if (!(await hasStoredLogin(serverUrl, dir))) return undefined;
  const { OAuthSession } = await import("./session/index.js");
  try {
    const session = new OAuthSession({
      serverUrl,
      configDir: dir,
      clientName: "chat-cli",
      fetch: options.fetch,
    });
    return await session.accessToken();
  } catch {
    // A refused URL or an unreadable store means no usable login; the caller then says how to sign in.
    return undefined;
  }
}
