/** The upstream's HTTP exchange with credentials: bearer token (or a DPoP proof, RFC 9449) and custom headers added, a refused token recovered and the request sent again. */
import type { BridgeLog } from "../../log/log.js";
import type { CustomHeader } from "../../options/custom-headers.js";
import { type HttpAnswer, type HttpExchange, type HttpRequest, isAuthChallenge } from "./http-exchange.js";
import { nodeHttpExchange } from "./node-http-exchange.js";

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
  /** The login's DPoP signer when its tokens are DPoP-bound; undefined (or absent) for Bearer tokens. */
  proofSigner?(): Promise<ProofSigner | undefined>;
}

/** How long a token from the session is reused before asking it again (it checks the token store's files). */
const TOKEN_REUSE_MS = 5000;

/**
 * Recoveries one request may wait for: a late refresh can bring a token that expires before the retry arrives. A
 * 401 means the request did not run, so sending it again is safe; the bound stops a server that refuses every token.
 */
const MAX_RECOVERIES_PER_REQUEST = 3;

/** `exchange` with credentials. While one request recovers, the others wait in order: none goes with a stale token. */
export function createAuthorizedExchange(options: {
  auth: BridgeAuth | undefined;
  headers: CustomHeader[];
  log: BridgeLog;
  exchange?: HttpExchange;
}): HttpExchange {
  const { auth, headers, log } = options;
  const baseExchange = options.exchange ?? nodeHttpExchange;
  let recovery: Promise<string> | undefined;
  let cached: { token: Promise<string | undefined>; until: number } | undefined;
  /** The newest token this exchange has seen: a 401 for an older one is retried with it, without a recovery. */
  let latest: string | undefined;

  // The session checks its store's files for the token: one answer serves a few seconds of requests.
  const currentToken = (): Promise<string | undefined> => {
    if (!auth) return Promise.resolve(undefined);
    const now = Date.now();
    if (cached && cached.until > now) return cached.token;
    const token = auth.accessToken();
    const entry = { token, until: now + TOKEN_REUSE_MS };
    cached = entry;
    token.then(
      (value) => {
        if (cached === entry && value) latest = value;
      },
      () => {
        if (cached === entry) cached = undefined;
      },
    );
    return token;
  };

  /** The one recovery for a rejected token: a burst of 401s costs one refresh (or sign-in). */
  const recovered = (response: HttpAnswer, rejected: string | undefined): Promise<string> => {
    if (latest && latest !== rejected && !recovery) return Promise.resolve(latest); // already recovered
    if (!recovery) {
      // A refresh that works is routine (said with --debug); a sign-in it leads to speaks for itself.
      if (response.status === 401) log.debug("the server asked for authorization; refreshing or signing in");
      else log.info("the server asked for more scopes; signing in again");
      const started = (auth as BridgeAuth)
        .recover({
          status: response.status,
          wwwAuthenticate: response.headers.get("www-authenticate"),
          ...(rejected ? { rejectedToken: rejected } : {}),
        })
        .then((token) => {
          latest = token;
          cached = { token: Promise.resolve(token), until: Date.now() + TOKEN_REUSE_MS };
          return token;
        })
        .finally(() => {
          if (recovery === started) recovery = undefined;
        });
      recovery = started;
    }
    return recovery;
  };

  const withCredentials = async (
    url: URL,
    init: HttpRequest,
    token: string | undefined,
  ): Promise<HttpRequest> => {
    const merged = { ...init.headers };
    for (const header of headers) merged[header.name.toLowerCase()] = header.value;
    const signer = token ? await auth?.proofSigner?.() : undefined;
    if (token) Object.assign(merged, await credentialHeaders(token, signer, init.method, url));
    return { ...init, headers: merged };
  };

  /** One exchange; a DPoP nonce challenge is answered at once with a proof that carries the nonce. */
  const send = async (url: URL, init: HttpRequest, token: string | undefined): Promise<HttpAnswer> => {
    const response = await baseExchange(url, await withCredentials(url, init, token));
    if (!token || !askedForNonce(response, await auth?.proofSigner?.(), url)) return response;
    await response.body?.cancel().catch(() => undefined);
    return baseExchange(url, await withCredentials(url, init, token));
  };

  return async (url, init) => {
    if (recovery) await recovery.catch(() => undefined);
    const token = await currentToken();
    const response = await send(url, init, token);
    // Ending a session is best-effort: never sign in on the way out.
    if (!auth || !isAuthChallenge(response) || init.method === "DELETE") return response;

    let refused = response;
    let rejected = token;
    for (let recoveries = 1; ; recoveries++) {
      await refused.body?.cancel().catch(() => undefined);
      const fresh = await recovered(refused, rejected);
      log.debug(`retrying ${init.method} with new credentials`);
      const retried = await send(url, init, fresh);
      // Refused again (a 403 for scopes is not asked twice): sent again only with a newer token, within the bound.
      if (retried.status !== 401 || fresh === rejected || recoveries >= MAX_RECOVERIES_PER_REQUEST)
        return retried;
      refused = retried;
      rejected = fresh;
    }
  };
}

/** Signs DPoP proofs with the login's key and keeps each origin's newest nonce (the SDK's `DpopSession` is one). */
export interface ProofSigner {
  buildProof(request: { htm: string; htu: string; accessToken?: string }): Promise<string>;
  rememberNonce(url: string, nonce: string): void;
}

/** The headers that present `token` on a request to `url`: a new proof each time (a proof is good once). */
export async function credentialHeaders(
  token: string,
  signer: ProofSigner | undefined,
  method: string,
  url: URL,
): Promise<Record<string, string>> {
  if (!signer) return { authorization: `Bearer ${token}` };
  const proof = await signer.buildProof({ htm: method, htu: url.href, accessToken: token });
  return { authorization: `DPoP ${token}`, dpop: proof };
}

/** Keeps the answer's `DPoP-Nonce` (RFC 9449 §8.2); true for a `use_dpop_nonce` challenge (§9), retried, not a sign-in. */
export function askedForNonce(response: HttpAnswer, signer: ProofSigner | undefined, url: URL): boolean {
  const nonce = response.headers.get("dpop-nonce");
  if (!signer || !nonce) return false;
  signer.rememberNonce(url.href, nonce);
  return (
    response.status === 401 &&
    /\bDPoP\b.*error="use_dpop_nonce"/is.test(response.headers.get("www-authenticate") ?? "")
  );
}
