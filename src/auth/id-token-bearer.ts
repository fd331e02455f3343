/** `--use-id-token`: the token response's OIDC ID token stands in for the access token, for servers that expect it. */
import type { OAuthTokens } from "@modelcontextprotocol/client";
import { AuthRequiredError } from "./errors.js";

/** An ID token is a JWT of a few hundred bytes; a huge one is no ID token. */
const MAX_ID_TOKEN_CHARS = 16 * 1024;

/**
 * `tokens` with the ID token as `access_token` and its lifetime as the shorter of `expires_in` and the ID token's
 * own `exp`; throws when the response carried none (the bearer would silently be the wrong token).
 */
export function idTokenAsBearer(tokens: OAuthTokens): OAuthTokens {
  const idToken = tokens.id_token;
  if (!idToken || idToken.length > MAX_ID_TOKEN_CHARS) {
    throw new AuthRequiredError(
      "--use-id-token: the token response has no ID token (id_token), so there is nothing to send as the bearer; " +
        "an OpenID provider returns one when the `openid` scope is asked for (e.g. --static-oauth-client-metadata " +
        `'{"scope":"openid ..."}'), or leave out --use-id-token.`,
      "refused",
    );
  }
  const untilExp = secondsUntilExp(idToken);
  const expiresIn =
    untilExp === undefined ? tokens.expires_in : Math.min(untilExp, tokens.expires_in ?? untilExp);
  return { ...tokens, access_token: idToken, ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}) };
}

/** Seconds until the JWT's `exp`, read without checking its signature (the server checks it; this only times refreshes). */
function secondsUntilExp(jwt: string): number | undefined {
  const claims = jwt.split(".")[1];
  if (!claims) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(claims, "base64url").toString("utf8")) as { exp?: unknown }).exp;
    return typeof exp === "number" && Number.isFinite(exp) ? exp - Math.floor(Date.now() / 1000) : undefined;
  } catch {
    return undefined;
  }
}
