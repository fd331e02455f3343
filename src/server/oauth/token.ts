/** The client's endpoints: `/token` (code, refresh, device code, client credentials, jwt-bearer), `/device_authorization` (RFC 8628) and `/revoke` (RFC 7009), with client authentication (RFC 6749 §2.3). */

import { jsonResponse, readFormBody } from "../http.js";
import { sameSecret } from "../ids.js";
import { ServiceError } from "../service-error.js";
import { OAuthError, type TokenResponseBody, tokenResponse } from "./grants.js";
import { assertionSubject, JWT_BEARER_ASSERTION_TYPE, JWT_BEARER_GRANT_TYPE } from "./jwt.js";
import { findClient, type OAuthParts, rateLimited } from "./parts.js";
import { DEVICE_CODE_GRANT_TYPE, type RegisteredClient } from "./registration.js";

const GRANT_TYPES = new Set([
  "authorization_code",
  "refresh_token",
  DEVICE_CODE_GRANT_TYPE,
  "client_credentials",
  JWT_BEARER_GRANT_TYPE,
]);

export const DEVICE_AUTHORIZATION_PATH = "/device_authorization";

/** Token responses are never cached (RFC 6749 §5.1). */
export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

export async function handleToken(parts: OAuthParts, request: Request, clientIp: string): Promise<Response> {
  const limited = rateLimited(parts.limiters.token, clientIp, "json");
  if (limited) return limited;
  const answer = await answerOAuthErrors(async () => {
    const form = await formOf(request);
    const client = await authenticateClient(parts, request, form);
    // Before the grant is used: a proof refused (or asking for a nonce) leaves the code or refresh token unspent.
    const proof = await parts.dpop.tokenRequestKey(request, form);
    try {
      return await grant(parts, form, client, (body: TokenResponseBody) =>
        jsonResponse(200, parts.dpop.bind(body, proof, client), NO_STORE),
      );
    } catch (error) {
      // Refused: the proof was not used, so it takes no room and may come again.
      proof?.release();
      throw error;
    }
  });
  return parts.dpop.withNonce(answer);
}

/** The grant of a token request whose client and proof passed; `issued` makes the answer of the tokens. */
async function grant(
  parts: OAuthParts,
  form: URLSearchParams,
  client: RegisteredClient,
  issued: (body: TokenResponseBody) => Response,
): Promise<Response> {
  const grantType = form.get("grant_type");
  if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
  const offered = grantType === JWT_BEARER_GRANT_TYPE ? parts.jwtBearer.offered : GRANT_TYPES.has(grantType);
  if (!offered || (grantType === DEVICE_CODE_GRANT_TYPE && !parts.offersDeviceGrant)) {
    throw new OAuthError("unsupported_grant_type", `grant_type ${grantType} is not supported`);
  }
  if (!client.grant_types.includes(grantType)) {
    throw new OAuthError("unauthorized_client", `the client is not registered for ${grantType}`);
  }
  if (grantType === JWT_BEARER_GRANT_TYPE) {
    return issued(await parts.jwtBearer.redeem(client, form));
  }
  if (grantType === "client_credentials") {
    return issued(parts.flows.grantClientCredentials(client, form.get("scope"), form.get("resource")));
  }
  if (grantType === "authorization_code") {
    const code = form.get("code");
    const verifier = form.get("code_verifier");
    if (!code) throw new OAuthError("invalid_request", "code is required");
    if (!verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) {
      throw new OAuthError("invalid_request", "code_verifier is required (43 to 128 unreserved characters)");
    }
    const body = parts.flows.exchangeCode(
      client,
      code,
      verifier,
      form.get("redirect_uri"),
      form.get("resource"),
    );
    return issued(body);
  }
  if (grantType === DEVICE_CODE_GRANT_TYPE) {
    const deviceCode = form.get("device_code");
    if (!deviceCode) throw new OAuthError("invalid_request", "device_code is required");
    const resource = form.get("resource");
    const tokens = parts.devices.redeem(
      client.client_id,
      deviceCode,
      resource ? parts.flows.ourResource(resource) : undefined,
    );
    return issued(tokenResponse(tokens));
  }
  const refreshToken = form.get("refresh_token");
  if (!refreshToken) throw new OAuthError("invalid_request", "refresh_token is required");
  const body = parts.flows.exchangeRefreshToken(
    client,
    refreshToken,
    form.get("scope"),
    form.get("resource"),
  );
  return issued(body);
}

/** RFC 8628 §3.1-3.2: an authenticated client with the device grant gets a device code and a user code. */
export async function handleDeviceAuthorization(
  parts: OAuthParts,
  request: Request,
  clientIp: string,
): Promise<Response> {
  const limited = rateLimited(parts.limiters.token, clientIp, "json");
  if (limited) return limited;
  return answerOAuthErrors(async () => {
    const form = await formOf(request);
    const client = await authenticateClient(parts, request, form);
    if (!client.grant_types.includes(DEVICE_CODE_GRANT_TYPE)) {
      throw new OAuthError(
        "unauthorized_client",
        `the client is not registered for ${DEVICE_CODE_GRANT_TYPE}`,
      );
    }
    const checked = parts.flows.checkScopesAndResource(form.get("scope"), form.get("resource"));
    const asked = {
      clientId: client.client_id,
      scopes: checked.scopes,
      ...(checked.resource ? { resource: checked.resource } : {}),
    };
    const started = parts.devices.start(asked);
    const auto = parts.autoApprove;
    // As at /authorize: no page, the request is approved for the configured account at once.
    if (auto) {
      parts.devices.approve(started.userCode, {
        ...asked,
        account: auto.account,
        ...(auto.userId ? { userId: auto.userId } : {}),
      });
    }
    const verificationUri = `${parts.issuer}/device`;
    return jsonResponse(
      200,
      {
        device_code: started.deviceCode,
        user_code: started.userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(started.userCode)}`,
        expires_in: started.expiresIn,
        interval: started.interval,
      },
      NO_STORE,
    );
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

/** Runs an endpoint, answering an `OAuthError` as its JSON error (401 ones with a Basic challenge). */
export async function answerOAuthErrors(run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    const headers: Record<string, string> = { ...NO_STORE };
    if (error.status === 401) headers["www-authenticate"] = 'Basic realm="token"';
    return jsonResponse(error.status, { error: error.error, error_description: error.description }, headers);
  }
}

export async function formOf(request: Request): Promise<URLSearchParams> {
  if (request.method !== "POST") throw new OAuthError("invalid_request", "use POST", 405);
  try {
    return await readFormBody(request);
  } catch (error) {
    throw new OAuthError(
      "invalid_request",
      error instanceof ServiceError ? error.message : "unreadable form",
    );
  }
}

/**
 * The client of the request: `client_secret_basic` (Authorization header) or `client_secret_post` (form) for a
 * client with a secret, `private_key_jwt` (a signed assertion in the form) for one with registered keys,
 * `client_id` alone for a public one. Anything else, or more than one method at once, is `invalid_client`.
 */
export async function authenticateClient(
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
  if (assertion !== null || form.has("client_assertion_type")) {
    if (authorization !== null || secret !== null)
      throw refused("Use one client authentication method, not two");
    return authenticateByAssertion(parts, form, assertion);
  }
  if (authorization !== null) {
    const basic = basicCredentials(authorization);
    if (!basic || (clientId !== null && clientId !== basic.clientId) || secret !== null) {
      throw refused("Malformed Basic client credentials");
    }
    clientId = basic.clientId;
    secret = basic.secret;
  }
  if (!clientId) throw refused("client_id is required");
  const lookup = await findClient(parts, clientId);
  if (!lookup.ok) throw refused("Invalid client_id");
  const client = lookup.client;
  if (client.token_endpoint_auth_method === "private_key_jwt") {
    throw refused("This client authenticates with private_key_jwt (a client_assertion)");
  }
  if (client.client_secret === undefined) {
    if (secret !== null && secret !== "") throw refused("This client is public: it has no secret");
    return client;
  }
  if (secret === null || !sameSecret(client.client_secret, secret)) throw refused("Invalid client_secret");
  return client;
}

/** RFC 7523 §2.2: a JWT the client signed with a key it registered; `client_id`, when sent, must be its `sub`. */
async function authenticateByAssertion(
  parts: OAuthParts,
  form: URLSearchParams,
  assertion: string | null,
): Promise<RegisteredClient> {
  const refused = (why: string) => new OAuthError("invalid_client", why, 400);
  if (form.get("client_assertion_type") !== JWT_BEARER_ASSERTION_TYPE || !assertion) {
    throw refused(`client_assertion_type must be ${JWT_BEARER_ASSERTION_TYPE}, with a client_assertion`);
  }
  const clientId = assertionSubject(assertion);
  const named = form.get("client_id");
  if (named !== null && named !== clientId) throw refused("client_id does not match the assertion's sub");
  const lookup = await findClient(parts, clientId);
  if (!lookup.ok) throw refused("Invalid client_id");
  const { client } = lookup;
  if (client.token_endpoint_auth_method !== "private_key_jwt" || !client.jwks) {
    throw refused("This client has no registered keys for private_key_jwt");
  }
  await parts.assertions.check(assertion, client);
  return client;
}

/** RFC 6749 §2.3.1: `Basic base64(urlencode(id):urlencode(secret))`. */
export function basicCredentials(header: string): { clientId: string; secret: string } | null {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return null;
  try {
    const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " "));
    const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " "));
    return clientId ? { clientId, secret } : null;
  } catch {
    return null;
  }
}
