/** The client's endpoints: `/token` (code, refresh, device code, client credentials, jwt-bearer), `/device_authorization` (RFC 8628) and `/revoke` (RFC 7009), with client authentication (RFC 6749 §2.3), and `/register` (RFC 7591); and what every endpoint shares (`OAuthParts`, clients, the per-IP limits). */
import type { ServerContext } from "../context.js";
import { html, jsonResponse, pageResponse, readBodyText } from "../http.js";
import { newId, sameSecret } from "../ids.js";
import type { OAuthRateLimits } from "../options.js";
import { DEFAULT_OAUTH_RATE_LIMITS, TokenBucketLimiter } from "../rate-limit.js";
import type { ClientMetadataDocuments } from "./client-metadata-documents.js";
import type { DeviceAuthorizations } from "./device.js";
import type { DpopPolicy } from "./dpop.js";
import {
  answerOAuthErrors,
  basicCredentials,
  clientOf,
  DEVICE_CODE_GRANT_TYPE,
  formOf,
  NO_STORE,
  OAuthError,
  type OAuthGrants,
  parseClientMetadata,
  type RegisteredClient,
  type TokenResponseBody,
} from "./grants.js";
import {
  type Assertions,
  assertionSubject,
  JWT_BEARER_ASSERTION_TYPE,
  JWT_BEARER_GRANT_TYPE,
} from "./jwt.js";

export interface OAuthParts {
  ctx: ServerContext;
  /** Exactly the base URL, from which the metadata URL is built (RFC 8414 §3.3). */
  issuer: string;
  grants: OAuthGrants;
  /** Pending device authorizations (RFC 8628). */
  devices: DeviceAuthorizations;
  /** False when the server was started without the device grant (`deviceAuthorization: false`). */
  offersDeviceGrant: boolean;
  documents: ClientMetadataDocuments;
  limiters: Partial<Record<keyof OAuthRateLimits, TokenBucketLimiter>>;
  /** `private_key_jwt` assertions, and the jwt-bearer grant: workload identity tokens and ID-JAGs of trusted issuers. */
  assertions: Assertions;
  /** DPoP proofs at the token endpoint and the binding of the tokens issued there. */
  dpop: DpopPolicy;
  now: () => number;
  /** When set, requests are approved for this account at once (no consent page). */
  autoApprove?: { account: string; userId?: string };
}

/** A limiter for each endpoint not turned off; each endpoint has its own buckets. */
export function oauthLimiters(
  option: OAuthRateLimits | false | undefined,
  now: () => number,
): OAuthParts["limiters"] {
  if (option === false) return {};
  const limiters: OAuthParts["limiters"] = {};
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
  const body = {
    error: "too_many_requests",
    error_description: `Too many requests from this address; retry after ${seconds} seconds.`,
  };
  return jsonResponse(429, body, headers);
}

/**
 * A client, and whether the server can vouch for its redirect URIs (RFC 9700 §4.11.2): pre-registered clients
 * yes; dynamically registered ones and metadata-document clients no (anyone can name any URI there).
 */
export async function findClient(
  parts: OAuthParts,
  clientId: string,
): Promise<{ ok: true; client: RegisteredClient; vouched: boolean } | { ok: false; reason: string }> {
  const known = parts.grants.getClient(clientId);
  if (known) return { ok: true, client: known, vouched: !parts.grants.isDynamicallyRegistered(clientId) };
  if (!parts.documents.isDocumentUrl(clientId)) return { ok: false, reason: "unknown client_id" };
  const outcome = await parts.documents.resolve(clientId);
  return outcome.ok ? { ...outcome, vouched: false } : outcome;
}

export const DEVICE_AUTHORIZATION_PATH = "/device_authorization";

type Grant = (
  ...args: [OAuthParts, RegisteredClient, URLSearchParams]
) => TokenResponseBody | Promise<TokenResponseBody>;

/** Each grant of `/token`, once its client (and DPoP proof) passed. */
const GRANTS = new Map<string, Grant>([
  ["authorization_code", (parts, client, form) => parts.grants.exchangeCode(client, form)],
  ["refresh_token", (parts, client, form) => parts.grants.refresh(client, form)],
  ["client_credentials", (parts, client, form) => parts.grants.grantClientCredentials(client, form)],
  [JWT_BEARER_GRANT_TYPE, (parts, client, form) => parts.assertions.redeem(client, form)],
  [DEVICE_CODE_GRANT_TYPE, (parts, client, form) => parts.devices.redeem(client.client_id, form)],
]);

const unregistered = (grantType: string) =>
  new OAuthError("unauthorized_client", `the client is not registered for ${grantType}`);

export async function handleToken(parts: OAuthParts, request: Request, clientIp: string): Promise<Response> {
  const limited = rateLimited(parts.limiters.token, clientIp, "json");
  if (limited) return limited;
  const answer = await answerOAuthErrors(async () => {
    const form = await formOf(request);
    const client = await authenticateClient(parts, request, form);
    // Before the grant is used: a proof refused (or asking for a nonce) leaves the code or refresh token unspent.
    const proof = await parts.dpop.tokenRequestKey(request, form);
    try {
      const grantType = form.get("grant_type");
      if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
      const grant = GRANTS.get(grantType);
      const offered =
        grantType === JWT_BEARER_GRANT_TYPE
          ? parts.assertions.offered
          : grantType !== DEVICE_CODE_GRANT_TYPE || parts.offersDeviceGrant;
      if (!grant || !offered)
        throw new OAuthError("unsupported_grant_type", `grant_type ${grantType} is not supported`);
      if (!client.grant_types.includes(grantType)) throw unregistered(grantType);
      const body = await grant(parts, client, form);
      return jsonResponse(200, parts.dpop.bind(body, proof, client), NO_STORE);
    } catch (error) {
      // Refused: the proof was not used, so it takes no room and may come again.
      proof?.release();
      throw error;
    }
  });
  return parts.dpop.withNonce(answer);
}

/** RFC 8628 §3.1-3.2: an authenticated client with the device grant gets a device code and a user code. */
export async function handleDeviceAuthorization(parts: OAuthParts, request: Request, clientIp: string) {
  const limited = rateLimited(parts.limiters.token, clientIp, "json");
  if (limited) return limited;
  return answerOAuthErrors(async () => {
    const form = await formOf(request);
    const client = await authenticateClient(parts, request, form);
    if (!client.grant_types.includes(DEVICE_CODE_GRANT_TYPE)) throw unregistered(DEVICE_CODE_GRANT_TYPE);
    const checked = parts.grants.checkScopesAndResource(form.get("scope"), form.get("resource"));
    const asked = { clientId: client.client_id, ...checked };
    const started = parts.devices.start(asked);
    const auto = parts.autoApprove;
    // As at /authorize: no page, the request is approved for the configured account at once.
    if (auto) parts.devices.decide(started.userCode, { ...asked, ...auto });
    const verificationUri = `${parts.issuer}/device`;
    const body = {
      device_code: started.deviceCode,
      user_code: started.userCode,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(started.userCode)}`,
      expires_in: started.expiresIn,
      interval: started.interval,
    };
    return jsonResponse(200, body, NO_STORE);
  });
}

export async function handleRevoke(parts: OAuthParts, request: Request): Promise<Response> {
  return answerOAuthErrors(async () => {
    const form = await formOf(request);
    const client = await authenticateClient(parts, request, form);
    const token = form.get("token");
    if (!token) throw new OAuthError("invalid_request", "token is required");
    parts.grants.revokeToken(token, client.client_id);
    return new Response(null, { status: 200, headers: NO_STORE });
  });
}

/**
 * The client of the request: `client_secret_basic` (Authorization header) or `client_secret_post` (form) for a
 * client with a secret, `private_key_jwt` (a signed assertion in the form, RFC 7523 §2.2) for one with registered
 * keys, `client_id` alone for a public one. Anything else, or more than one method at once, is `invalid_client`.
 */
async function authenticateClient(
  parts: OAuthParts,
  request: Request,
  form: URLSearchParams,
): Promise<RegisteredClient> {
  const authorization = request.headers.get("authorization");
  // RFC 6749 §5.2: 401 with a challenge when the client authenticated through the Authorization header.
  const refused = (why: string) => new OAuthError("invalid_client", why, authorization === null ? 400 : 401);
  let clientId = form.get("client_id");
  let secret = form.get("client_secret");
  const assertion = form.get("client_assertion");
  const byAssertion = assertion !== null || form.has("client_assertion_type");
  if (byAssertion) {
    if (authorization !== null || secret !== null)
      throw refused("Use one client authentication method, not two");
    if (form.get("client_assertion_type") !== JWT_BEARER_ASSERTION_TYPE || !assertion)
      throw refused(`client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}, with a client_assertion`);
    const named = clientId;
    clientId = assertionSubject(assertion);
    if (named !== null && named !== clientId) throw refused("client_id does not match the assertion's sub");
  } else if (authorization !== null) {
    const basic = basicCredentials(authorization);
    if (!basic || (clientId !== null && clientId !== basic.clientId) || secret !== null)
      throw refused("Malformed Basic client credentials");
    clientId = basic.clientId;
    secret = basic.secret;
  }
  if (!clientId) throw refused("client_id is required");
  const lookup = await findClient(parts, clientId);
  if (!lookup.ok) throw refused("Invalid client_id");
  const { client } = lookup;
  const hasKeys = client.token_endpoint_auth_method === "private_key_jwt";
  if (byAssertion) {
    if (!hasKeys || !client.jwks) throw refused("This client has no registered keys for private_key_jwt");
    await parts.assertions.checkClient(assertion as string, client);
    return client;
  }
  if (hasKeys) throw refused("This client authenticates with private_key_jwt (a client_assertion)");
  if (client.client_secret === undefined) {
    if (secret !== null && secret !== "") throw refused("This client is public: it has no secret");
    return client;
  }
  if (secret === null || !sameSecret(client.client_secret, secret)) throw refused("Invalid client_secret");
  return client;
}

/** Largest `/register` body read. */
const MAX_REGISTRATION_BODY_BYTES = 16 * 1024;

/** `/register` (RFC 7591, deprecated by MCP 2026-07-28 but still offered): validated, trimmed, capped and bounded. */
export async function handleRegister(
  parts: OAuthParts,
  request: Request,
  clientIp: string,
): Promise<Response> {
  return answerOAuthErrors(async () => {
    if (request.method !== "POST") throw new OAuthError("invalid_request", "use POST", 405);
    const limited = rateLimited(parts.limiters.register, clientIp, "json");
    if (limited) return limited;
    const text = await readBodyText(request, MAX_REGISTRATION_BODY_BYTES).catch(() => {
      // RFC 7591 §3.2.2 answers every refusal with 400; the unread rest of the body ends the connection.
      const why = `the registration is larger than ${MAX_REGISTRATION_BODY_BYTES} bytes`;
      throw new OAuthError("invalid_client_metadata", why, 400, { connection: "close" });
    });
    let json: unknown;
    try {
      json = JSON.parse(text ?? "");
    } catch {
      throw new OAuthError("invalid_client_metadata", "the body must be a JSON object of client metadata");
    }
    const metadata = parseClientMetadata(json);
    if (!parts.grants.makeRoomForRegistration()) {
      const why = "The server holds as many client registrations as it keeps; try again later.";
      throw new OAuthError("temporarily_unavailable", why, 503, { "retry-after": "3600" });
    }
    // A secret (and `client_secret_basic`, RFC 7591's default) unless the client asked for `none` or `_post`.
    const client = clientOf(
      metadata,
      newId("client"),
      parts.now(),
      metadata.token_endpoint_auth_method ?? "client_secret_basic",
    );
    return jsonResponse(201, parts.grants.registerClient(client));
  });
}
