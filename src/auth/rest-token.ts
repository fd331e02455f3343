/** The REST token in effect, by one precedence: the token given, `$CHAT_API_KEY`, the `chat-cli login` credentials (refreshed when due). */
import { configDir, envApiKey } from "../config/index.js";
import { hasStoredLogin, restServerUrl } from "./login-key.js";

export interface RestToken {
  token: string;
  /** Given explicitly (`--token`, the `token` option), the environment, or a login. */
  source: "given" | "env" | "login";
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
 * due) only when neither of the others is set.
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
  const stored = await storedAccessToken(baseUrl, { env, fetch: options.fetch });
  return stored ? { token: stored, source: "login" } : undefined;
}

/**
 * A usable access token for `baseUrl` from the login `chat-cli login` saved, or undefined when there is none.
 * Convention: the REST login is for the protected resource `restServerUrl(baseUrl)` = `${baseUrl}/v2` (the
 * resource of `/.well-known/oauth-protected-resource/v2`), with no custom headers. Never opens a browser; the
 * session (and the OAuth code under it) loads only when a login is stored.
 */
export async function storedAccessToken(
  baseUrl: string,
  options: { env?: Record<string, string | undefined>; fetch?: typeof fetch | undefined } = {},
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
