/** The REST token in effect, by one precedence: the token given, `$CHAT_API_KEY`, the `chat-cli login` credentials. */
import { envApiKey } from "../config/index.js";

/** Where the token in effect came from: given explicitly (`--token`, the `token` option), the environment, or a login. */
export type RestTokenSource = "given" | "env" | "login";

export interface RestToken {
  token: string;
  source: RestTokenSource;
}

export interface RestTokenOptions {
  /** The explicit token (`--token`, `ChatClient`'s `token`); blank counts as absent. */
  token?: string;
  /** Default: `process.env`. */
  env?: Record<string, string | undefined>;
  fetch?: typeof fetch;
}

/**
 * The token for `baseUrl`, or undefined when there is none at all. The stored login is read (and refreshed when
 * due) only when neither of the others is set, and its reader is imported only then, so this stays cheap to import.
 */
export async function resolveRestToken(
  baseUrl: string,
  options: RestTokenOptions = {},
): Promise<RestToken | undefined> {
  const given = options.token?.trim();
  if (given) return { token: given, source: "given" };
  const env = options.env ?? process.env;
  const fromEnv = envApiKey(env);
  if (fromEnv) return { token: fromEnv, source: "env" };
  const { storedAccessToken } = await import("./stored-access-token.js");
  const stored =
    options.env || options.fetch
      ? await storedAccessToken(baseUrl, {
          env: options.env as NodeJS.ProcessEnv | undefined,
          fetch: options.fetch,
        })
      : await storedAccessToken(baseUrl);
  return stored ? { token: stored, source: "login" } : undefined;
}
