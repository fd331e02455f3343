/** What the OAuth endpoints share: grants, flows, clients, the per-IP limits and their 429s, the server's identity. */
import type { ServerContext } from "../context.js";
import { html, jsonResponse, pageResponse } from "../http.js";
import type { OAuthRateLimits } from "../options.js";
import { DEFAULT_OAUTH_RATE_LIMITS, TokenBucketLimiter } from "../rate-limit.js";
import type { ClientMetadataDocuments } from "./client-metadata-documents.js";
import type { DeviceAuthorizations } from "./device.js";
import type { DpopPolicy } from "./dpop.js";
import type { AuthorizationFlows, OAuthGrants } from "./grants.js";
import type { ClientAssertions, JwtBearerGrant } from "./jwt.js";
import type { RegisteredClient } from "./registration.js";

export interface OAuthParts {
  ctx: ServerContext;
  /** Exactly the base URL, from which the metadata URL is built (RFC 8414 §3.3). */
  issuer: string;
  grants: OAuthGrants;
  flows: AuthorizationFlows;
  /** Pending device authorizations (RFC 8628). */
  devices: DeviceAuthorizations;
  /** False when the server was started without the device grant (`deviceAuthorization: false`). */
  offersDeviceGrant: boolean;
  documents: ClientMetadataDocuments;
  limiters: OAuthLimiters;
  /** `private_key_jwt` assertions checked, and their `jti`s remembered against replay. */
  assertions: ClientAssertions;
  /** The jwt-bearer grant: workload identity tokens and ID-JAGs from trusted issuers. */
  jwtBearer: JwtBearerGrant;
  /** DPoP proofs at the token endpoint and the binding of the tokens issued there. */
  dpop: DpopPolicy;
  now: () => number;
  /** When set, requests are approved for this account at once (no consent page). */
  autoApprove?: { account: string; userId?: string };
}

/**
 * A client and whether the server can vouch for its redirect URIs (RFC 9700 §4.11.2): pre-registered clients
 * yes; dynamically registered ones and metadata-document clients no (anyone can name any URI there).
 */
export type ClientLookup =
  | { ok: true; client: RegisteredClient; vouched: boolean }
  | { ok: false; reason: string };

export async function findClient(parts: OAuthParts, clientId: string): Promise<ClientLookup> {
  const known = parts.grants.getClient(clientId);
  if (known) return { ok: true, client: known, vouched: !parts.grants.isDynamicallyRegistered(clientId) };
  if (parts.documents.isDocumentUrl(clientId)) {
    const outcome = await parts.documents.resolve(clientId);
    return outcome.ok
      ? { ok: true, client: outcome.client, vouched: false }
      : { ok: false, reason: outcome.reason };
  }
  return { ok: false, reason: "unknown client_id" };
}

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
