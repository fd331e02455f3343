/** `--use-id-token`: the token response's OIDC ID token stands in for the access token, once its claims are checked as OpenID Connect Core §3.1.3.7 says. */
import type { OAuthTokens } from "@modelcontextprotocol/client";
import { AuthRequiredError } from "./errors.js";

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
