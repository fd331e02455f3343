/** The fetch the remote transport uses: bearer token and custom headers added, one auth recovery per request. */
import type { CustomHeader } from "./headers.js";
import type { BridgeLog } from "./log.js";

/** What the relay needs from the OAuth session (src/auth `OAuthSession` satisfies it). */
export interface BridgeAuth {
  /** The current access token, refreshed ahead of expiry; never opens a browser. */
  accessToken(): Promise<string | undefined>;
  /** Refresh, or sign in once in the browser, after the server refused the token; returns a fresh token. */
  recover(challenge: {
    status: number;
    wwwAuthenticate: string | null;
    rejectedToken?: string;
  }): Promise<string>;
}

/** How long a token from the session is reused before asking it again (it reads the token store each time). */
const TOKEN_REUSE_MS = 5000;

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** True when the response asks for (other) credentials: 401, or 403 with `insufficient_scope` (step-up). */
export function isAuthChallenge(response: Response): boolean {
  if (response.status === 401) return true;
  return response.status === 403 && /insufficient_scope/.test(response.headers.get("www-authenticate") ?? "");
}

/**
 * Wraps fetch for the remote transport. While one request recovers authorization, the others wait before
 * going out, in the order they were made, so messages are held in order and none is sent with a stale token.
 */
export function createRemoteFetch(options: {
  auth: BridgeAuth | undefined;
  headers: CustomHeader[];
  log: BridgeLog;
  fetch?: FetchLike;
}): FetchLike {
  const { auth, headers, log } = options;
  const baseFetch = options.fetch ?? fetch;
  let recovery: Promise<string> | undefined;
  let cached: { token: Promise<string | undefined>; until: number } | undefined;

  // Every request needs the token; the session reads its store for it, so one answer serves a few seconds of
  // requests (the session refreshes well ahead of expiry, and a 401 still leads to recovery).
  const currentToken = (fresh = false): Promise<string | undefined> => {
    if (!auth) return Promise.resolve(undefined);
    const now = Date.now();
    if (!fresh && cached && cached.until > now) return cached.token;
    const token = auth.accessToken();
    cached = { token, until: now + TOKEN_REUSE_MS };
    token.catch(() => {
      cached = undefined;
    });
    return token;
  };

  const withCredentials = (init: RequestInit | undefined, token: string | undefined): RequestInit => {
    const merged = new Headers(init?.headers);
    for (const header of headers) merged.set(header.name, header.value);
    if (token) merged.set("authorization", `Bearer ${token}`);
    return { ...init, headers: merged };
  };

  return async (url, init) => {
    if (recovery) await recovery.catch(() => undefined);
    const token = await currentToken();
    const response = await baseFetch(url, withCredentials(init, token));
    // Ending a session is best-effort: never sign in on the way out.
    if (!auth || !isAuthChallenge(response) || init?.method === "DELETE") return response;

    await response.body?.cancel().catch(() => undefined);
    const current = await currentToken(true);
    let fresh: string;
    if (current && current !== token) {
      fresh = current; // another request already recovered while this one was in flight
    } else {
      if (!recovery) {
        log.info(
          response.status === 401
            ? "the server asked for authorization; refreshing or signing in"
            : "the server asked for more scopes; signing in again",
        );
        recovery = auth
          .recover({
            status: response.status,
            wwwAuthenticate: response.headers.get("www-authenticate"),
            rejectedToken: token,
          })
          .finally(() => {
            recovery = undefined;
          });
        recovery.then(
          (token) => {
            cached = { token: Promise.resolve(token), until: Date.now() + TOKEN_REUSE_MS };
          },
          () => undefined,
        );
      }
      fresh = await recovery;
    }
    log.debug(`retrying ${init?.method ?? "GET"} with new credentials`);
    return baseFetch(url, withCredentials(init, fresh));
  };
}
