/** How long a token is good for: `expires_in` kept sane, and when a token is due for refresh or has expired. */
import type { OAuthTokens } from "@modelcontextprotocol/client";
import { idTokenAsBearer } from "./id-token-bearer.js";
import type { StoredTokens } from "./stored-login.js";

const MAX_REFRESH_AHEAD_MS = 60_000;

/**
 * The tokens to keep; with `useIdToken` (`--use-id-token`), the ID token is the one handed out as the bearer.
 * `requestedAt` (when the token request was sent) starts the lifetime: `expires_in` counts from when the server
 * issued the token, so a slow answer must not make the token look younger than it is.
 */
export function toStoredTokens(
  answer: OAuthTokens,
  options: { useIdToken?: boolean | undefined } = {},
  requestedAt: number = Date.now(),
): StoredTokens {
  const tokens = options.useIdToken ? idTokenAsBearer(answer) : answer;
  const now = Math.min(requestedAt, Date.now());
  const lifetime = clampedLifetimeSeconds(tokens.expires_in);
  return {
    accessToken: tokens.access_token,
    tokenType: tokens.token_type,
    refreshToken: tokens.refresh_token,
    scope: tokens.scope,
    expiresAt: lifetime !== undefined ? now + lifetime * 1000 : undefined,
    issuedAt: now,
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
