/** The tokens a login keeps: `expires_in` kept sane, when a token is due for refresh or has expired, and `--use-id-token`'s ID token as the bearer. */
import type { OAuthTokens } from "@modelcontextprotocol/client";
import { AuthRequiredError } from "./errors.js";
import type { StoredTokens } from "./stored-login.js";

const MAX_REFRESH_AHEAD_MS = 60_000;

/**
 * The tokens to keep (the answer's scope, else `scope`, and the `account` it named); with `useIdToken`
 * (`--use-id-token`), the ID token is the one handed out as the bearer, once it is from `idTokenFrom.issuer` and for
 * `idTokenFrom.clientId` (and not expired). `requestedAt` (when the token request was sent) starts the lifetime: `expires_in` counts from when the server
 * issued the token, so a slow answer must not make the token look younger than it is.
 */
export function toStoredTokens(
  answer: OAuthTokens,
  options: {
    useIdToken?: boolean | undefined;
    idTokenFrom?: IdTokenExpectation | undefined;
    scope?: string | undefined;
    account?: string | undefined;
  } = {},
  requestedAt: number = Date.now(),
): StoredTokens {
  if (options.useIdToken && !options.idTokenFrom)
    throw new Error("toStoredTokens: useIdToken needs idTokenFrom");
  const tokens =
    options.useIdToken && options.idTokenFrom ? idTokenAsBearer(answer, options.idTokenFrom) : answer;
  const now = Math.min(requestedAt, Date.now());
  const lifetime = clampedLifetimeSeconds(tokens.expires_in);
  return {
    accessToken: tokens.access_token,
    tokenType: tokens.token_type,
    refreshToken: tokens.refresh_token,
    scope: tokens.scope ?? options.scope,
    expiresAt: lifetime !== undefined ? now + lifetime * 1000 : undefined,
    issuedAt: now,
    account: options.account,
  };
}

const MIN_TOKEN_LIFETIME_S = 1;
const MAX_TOKEN_LIFETIME_S = 366 * 24 * 3600;

/**
 * `expires_in` kept to a sane range: 1e308 would store a login that cannot be read back, and 0 or less (with no
 * refresh token) would open the browser for every request, so it counts as not given (the token is used until
 * the resource refuses it, which leads to a refresh or a sign-in).
 */
export function clampedLifetimeSeconds(expiresIn: number | undefined): number | undefined {
  if (expiresIn === undefined || !(expiresIn > 0)) return undefined;
  return Math.min(MAX_TOKEN_LIFETIME_S, Math.max(MIN_TOKEN_LIFETIME_S, expiresIn));
}

// Refresh ahead of expiry: a minute early, or a fifth of the lifetime for short-lived tokens.
export function isDue(tokens: StoredTokens): boolean {
  if (tokens.expiresAt === undefined) return false;
  const ahead = Math.min(MAX_REFRESH_AHEAD_MS, (tokens.expiresAt - tokens.issuedAt) / 5);
  return Date.now() >= tokens.expiresAt - ahead;
}

export function isExpired(tokens: StoredTokens): boolean {
  return tokens.expiresAt !== undefined && Date.now() >= tokens.expiresAt;
}

/** An ID token is a JWT of a few hundred bytes; a huge one is no ID token. */
const MAX_ID_TOKEN_CHARS = 16 * 1024;
/** Clock difference allowed between us and the provider, for `exp` and `iat`. */
const CLOCK_SKEW_SECONDS = 60;

/** Whom the ID token must be from and for: the authorization server's issuer and our client id. */
export interface IdTokenExpectation {
  issuer: string;
  clientId: string;
}

/**
 * `tokens` with the ID token as `access_token` and its lifetime as the shorter of `expires_in` and the ID token's
 * own `exp`. Throws when the response carried none (the bearer would silently be the wrong token), or when its `iss`
 * is not the issuer, its `aud` does not name our client (or `azp` names another), it has expired, or its `iat` lies
 * ahead (OpenID Connect Core §3.1.3.7). The signature is not checked: the token came straight from the token
 * endpoint over the connection the issuer was checked on (§3.1.3.7 item 6); we send no `nonce`, so none is compared.
 */
export function idTokenAsBearer(
  tokens: OAuthTokens,
  expected: IdTokenExpectation,
  nowSeconds: number = Date.now() / 1000,
): OAuthTokens {
  const idToken = tokens.id_token;
  if (!idToken || idToken.length > MAX_ID_TOKEN_CHARS) {
    throw new AuthRequiredError(
      "--use-id-token: the token response has no ID token (id_token), so there is nothing to send as the bearer; " +
        "an OpenID provider returns one when the `openid` scope is asked for (e.g. --static-oauth-client-metadata " +
        `'{"scope":"openid ..."}'), or leave out --use-id-token.`,
      "refused",
    );
  }
  const claims = claimsOf(idToken);
  const exp = checkedClaims(claims, expected, nowSeconds);
  const untilExp = Math.floor(exp - nowSeconds);
  const expiresIn = Math.min(untilExp, tokens.expires_in ?? untilExp);
  return { ...tokens, access_token: idToken, expires_in: expiresIn };
}

/** The ID token's `exp` once every claim passed; throws naming the claim that did not. */
function checkedClaims(claims: Record<string, unknown>, expected: IdTokenExpectation, now: number): number {
  const refuse = (why: string) =>
    new AuthRequiredError(
      `--use-id-token: the ID token ${why}, so it is not sent as the bearer (OpenID Connect Core §3.1.3.7); ` +
        "check that the authorization server is the OpenID provider meant, or leave out --use-id-token.",
      "refused",
    );
  if (claims.iss !== expected.issuer) {
    throw refuse(
      `names the issuer (iss) ${JSON.stringify(claims.iss)}, not ${JSON.stringify(expected.issuer)}`,
    );
  }
  const audiences =
    typeof claims.aud === "string" ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
  if (!audiences.includes(expected.clientId)) {
    throw refuse(`is not for this client: its aud does not name ${JSON.stringify(expected.clientId)}`);
  }
  if (claims.azp !== undefined && claims.azp !== expected.clientId) {
    throw refuse(`was issued to another party: its azp is ${JSON.stringify(claims.azp)}`);
  }
  const { exp, iat } = claims;
  if (typeof exp !== "number" || !Number.isFinite(exp)) throw refuse("has no numeric exp");
  if (exp + CLOCK_SKEW_SECONDS <= now) throw refuse("has expired (exp is past)");
  if (typeof iat !== "number" || !Number.isFinite(iat)) throw refuse("has no numeric iat");
  if (iat > now + CLOCK_SKEW_SECONDS) throw refuse("was issued in the future (iat is ahead of this clock)");
  return exp;
}

/** The JWT's claims, read without its signature; throws when it is no JWT with a JSON object for claims. */
function claimsOf(jwt: string): Record<string, unknown> {
  try {
    const claims: unknown = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8"));
    if (typeof claims === "object" && claims !== null && !Array.isArray(claims))
      return claims as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new AuthRequiredError("--use-id-token: the ID token is not a JWT with readable claims.", "refused");
}
