/** Per-client-IP token buckets on `/authorize`, `/token` and `/register`: 429 with `Retry-After`, as JSON or as a page. */
import { html } from "../html.js";
import { jsonResponse, pageResponse } from "../http.js";
import type { OAuthRateLimits } from "../options.js";
import { DEFAULT_OAUTH_RATE_LIMITS, TokenBucketLimiter } from "../rate-limit.js";

export type OAuthLimitedEndpoint = keyof OAuthRateLimits;

export type OAuthLimiters = Partial<Record<OAuthLimitedEndpoint, TokenBucketLimiter>>;

/** A limiter for each endpoint not turned off; each endpoint has its own buckets. */
export function oauthLimiters(option: OAuthRateLimits | false | undefined, now: () => number): OAuthLimiters {
  if (option === false) return {};
  const limiters: OAuthLimiters = {};
  for (const endpoint of ["authorize", "token", "register"] as const) {
    const limits = option?.[endpoint] === undefined ? DEFAULT_OAUTH_RATE_LIMITS[endpoint] : option[endpoint];
    if (limits) limiters[endpoint] = new TokenBucketLimiter(limits, now);
  }
  return limiters;
}

/**
 * The 429 answer when the client IP is past its limit, else undefined. Clients (`/token`, `/register`) get RFC
 * 6585 429 with the MCP SDK's `too_many_requests` error, which its client maps to `TooManyRequestsError`: RFC
 * 6749 and RFC 7591 define no rate-limit error, and RFC 8628's `slow_down` belongs to device-code polling only.
 * People (`/authorize`, in a browser) get a page.
 */
export function rateLimited(
  limiter: TokenBucketLimiter | undefined,
  clientIp: string,
  answer: "json" | "page",
): Response | undefined {
  const decision = limiter?.take(clientIp);
  if (!decision || decision.allowed) return undefined;
  const seconds = decision.retryAfterSeconds;
  const headers = { "retry-after": String(seconds) };
  if (answer === "page") {
    return pageResponse(
      429,
      "Too many requests",
      html`<h1>Too many sign-in attempts</h1>
        <p>Too many sign-in requests came from your address. Wait ${seconds} seconds, then start again from your app.</p>`,
      headers,
    );
  }
  return jsonResponse(
    429,
    {
      error: "too_many_requests",
      error_description: `Too many requests from this address; retry after ${seconds} seconds.`,
    },
    headers,
  );
}
