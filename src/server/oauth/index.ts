/** The OAuth 2.1 authorization server of the reference server on one fetch handler: metadata, registration, authorize and consent, device authorization, token, revoke; built from the server context. */
import type { ServerContext } from "../context.js";
import { jsonResponse, type RouteHandler } from "../http.js";
import type { OAuthServerOptions, PreRegisteredOAuthClient } from "../options.js";
import {
  DEVICE_VERIFICATION_PATH,
  handleAuthorize,
  handleConsent,
  handleDeviceVerification,
} from "./authorize.js";
import { ClientMetadataDocuments } from "./client-metadata-documents.js";
import { DeviceAuthorizations } from "./device.js";
import { DPOP_ALGORITHMS, DpopPolicy } from "./dpop.js";
import {
  CHAT_SCOPES,
  DEFAULT_ACCESS_TOKEN_TTL_SECONDS,
  DEFAULT_GRANT_TYPES,
  DEVICE_CODE_GRANT_TYPE,
  OAuthGrants,
  OFFLINE_ACCESS_SCOPE,
  type RegisteredClient,
  seededAccount,
  TOKEN_ENDPOINT_AUTH_METHODS,
} from "./grants.js";
import {
  Assertions,
  createReferenceIdp,
  IDP_METADATA_PATH,
  IDP_PATH,
  JWT_ALGORITHMS,
  JWT_BEARER_GRANT_TYPE,
  publicKeysOfJwks,
  trustedIssuersOf,
} from "./jwt.js";
import {
  DEVICE_AUTHORIZATION_PATH,
  handleDeviceAuthorization,
  handleRegister,
  handleRevoke,
  handleToken,
  type OAuthParts,
  oauthLimiters,
} from "./token.js";

/** Paths answered for browsers of other origins too (metadata and the client-to-server endpoints). */
const CORS_PATHS = new Set([
  "/token",
  "/register",
  "/revoke",
  DEVICE_AUTHORIZATION_PATH,
  "/.well-known/oauth-authorization-server",
  IDP_METADATA_PATH,
  `${IDP_PATH}/token`,
  `${IDP_PATH}/jwks.json`,
]);

/**
 * Builds the authorization server on `ctx` and pushes its access-token verifier onto `ctx.tokenVerifiers`.
 * Mount `handle` before the pages (it guards the `/signin` hop of a consent request).
 */
export function createOAuthRoutes(ctx: ServerContext): { handle: RouteHandler } {
  const options = ctx.options as OAuthServerOptions;
  const now = options.oauthNow ?? Date.now;
  const grants = new OAuthGrants({
    store: ctx.store,
    now,
    accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL_SECONDS,
    resources: [`${ctx.baseUrl}/mcp`, `${ctx.baseUrl}/v2`],
    issuer: ctx.baseUrl,
    registrationLimits: options.oauthRegistrationLimits,
  });
  const idp = options.referenceIdp ? createReferenceIdp(ctx, options.referenceIdp, now) : undefined;
  const trusted = [...trustedIssuersOf(options, ctx.accounts), ...(idp ? [idp.trusted] : [])];
  for (const client of options.oauthClients ?? []) {
    const saved = preRegisteredClient(ctx, client, now());
    // Pre-registered clients are vouched for: each may redeem assertions of the issuers trusted here.
    if (trusted.length > 0) saved.grant_types.push(JWT_BEARER_GRANT_TYPE);
    grants.saveClient(saved);
  }
  const isKnownUser = (id: string) => ctx.users.has(id);
  const parts: OAuthParts = {
    ctx,
    issuer: ctx.baseUrl,
    grants,
    devices: new DeviceAuthorizations({ grants, now, ...(options.deviceAuthorization || {}) }),
    offersDeviceGrant: options.deviceAuthorization !== false,
    documents: new ClientMetadataDocuments({
      now,
      ...(options.testOnlyAllowHttpClientMetadataDocuments ? { allowLoopbackHttp: true } : {}),
    }),
    limiters: oauthLimiters(options.oauthRateLimit, now),
    assertions: new Assertions({ issuer: ctx.baseUrl, trusted, grants, now, isKnownUser }),
    dpop: new DpopPolicy(options, ctx.store, `${ctx.baseUrl}/token`, now),
    now,
    ...(options.autoApprove ? { autoApprove: autoApproval(ctx, options.autoApprove) } : {}),
  };
  ctx.tokenVerifiers.push((token) => parts.dpop.withKey(token, grants.principalFor(token)));
  ctx.credentialCheck = parts.dpop.checkCredential;
  const { issuer } = parts;

  const route = async (request: Request, path: string, url: URL, clientIp: string) => {
    const resource = /^\/\.well-known\/oauth-protected-resource(\/mcp|\/v2)$/.exec(path)?.[1];
    // RFC 9728 protected resource metadata, to MCP 2026-07-28.
    if (resource) {
      return metadataResponse(request, {
        resource: `${issuer}${resource}`,
        authorization_servers: [issuer],
        scopes_supported: [...CHAT_SCOPES],
        bearer_methods_supported: ["header"],
        resource_name: resource === "/mcp" ? "Chat service MCP server" : "Chat service REST API v2",
        ...parts.dpop.resourceMetadata(),
      });
    }
    switch (path) {
      case "/.well-known/oauth-authorization-server":
        return metadataResponse(request, authorizationServerMetadata(parts));
      case "/authorize":
        return handleAuthorize(parts, request, clientIp);
      case "/token":
        return handleToken(parts, request, clientIp);
      case "/revoke":
        return handleRevoke(parts, request);
      case "/register":
        return handleRegister(parts, request, clientIp);
      case DEVICE_AUTHORIZATION_PATH:
        return parts.offersDeviceGrant ? handleDeviceAuthorization(parts, request, clientIp) : undefined;
      case DEVICE_VERIFICATION_PATH:
        return parts.offersDeviceGrant ? handleDeviceVerification(parts, request, url, clientIp) : undefined;
      default:
        if (idp && (path === IDP_METADATA_PATH || path.startsWith(`${IDP_PATH}/`)))
          return idp.handle(request, path);
        return handleConsent(parts, request, url);
    }
  };

  return {
    async handle(request, info) {
      const path = info.url.pathname;
      const cors = CORS_PATHS.has(path) || path.startsWith("/.well-known/oauth-protected-resource/");
      if (cors && request.method === "OPTIONS") {
        const headers = {
          "access-control-allow-origin": "*",
          "access-control-allow-methods": "GET, POST, OPTIONS",
          "access-control-allow-headers": "authorization, content-type, mcp-protocol-version, dpop",
          "access-control-max-age": "86400",
        };
        return new Response(null, { status: 204, headers });
      }
      const response = await route(request, path, info.url, info.clientIp);
      if (response && cors) {
        response.headers.set("access-control-allow-origin", "*");
        // A browser client must read the DPoP nonce the token endpoint hands out.
        response.headers.set("access-control-expose-headers", "dpop-nonce");
      }
      return response;
    },
  };
}

function metadataResponse(request: Request, body: Record<string, unknown>): Response {
  if (request.method === "GET" || request.method === "HEAD")
    return jsonResponse(200, body, { "cache-control": "public, max-age=3600" });
  const refusal = { error: "invalid_request", error_description: "use GET" };
  return jsonResponse(405, refusal, { allow: "GET, HEAD" });
}

/**
 * A client of the `oauthClients` option as the server keeps it: `private_key_jwt` with `jwks`, else a secret's
 * `client_secret_basic` (`_post` accepted too), else public; the `client_credentials` grant when it names an account.
 */
function preRegisteredClient(
  ctx: ServerContext,
  client: PreRegisteredOAuthClient,
  nowMs: number,
): RegisteredClient {
  const { jwks, client_credentials_account: account, ...rest } = client;
  const where = `oauthClients: client "${client.client_id}"`;
  if (jwks) publicKeysOfJwks(jwks, where);
  if (jwks && client.client_secret !== undefined)
    throw new Error(`${where} has both a client_secret and jwks; choose one`);
  if (account !== undefined) {
    if (!jwks && client.client_secret === undefined)
      throw new Error(`${where} needs a client_secret or jwks for client_credentials`);
    seededAccount(ctx.accounts, account, where);
  }
  const method = jwks ? "private_key_jwt" : client.client_secret ? "client_secret_basic" : "none";
  const grants = [
    ...DEFAULT_GRANT_TYPES,
    DEVICE_CODE_GRANT_TYPE,
    ...(account !== undefined ? ["client_credentials"] : []),
  ];
  return {
    client_name: client.client_id,
    ...rest,
    redirect_uris: client.redirect_uris ?? [],
    token_endpoint_auth_method: method,
    grant_types: grants,
    response_types: ["code"],
    client_id_issued_at: Math.floor(nowMs / 1000),
    ...(jwks ? { jwks } : {}),
    ...(account !== undefined ? { client_credentials_account: account } : {}),
  };
}

/** The account to approve for, and the first seeded person in it (the SSO page lets only that person complete SSO). */
function autoApproval(ctx: ServerContext, slug: string): { account: string; userId?: string } {
  seededAccount(ctx.accounts, slug, "autoApprove");
  const user = [...ctx.users.values()].find((candidate) => candidate.memberOf.includes(slug));
  return { account: slug, ...(user ? { userId: user.id } : {}) };
}

/** RFC 8414 authorization server metadata; `issuer` is exactly the URL the well-known address is built from (§3.3). */
function authorizationServerMetadata({ issuer, offersDeviceGrant, dpop, assertions }: OAuthParts) {
  const authMethods = [...TOKEN_ENDPOINT_AUTH_METHODS, "private_key_jwt"];
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    revocation_endpoint: `${issuer}/revoke`,
    ...(offersDeviceGrant ? { device_authorization_endpoint: `${issuer}${DEVICE_AUTHORIZATION_PATH}` } : {}),
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: [
      "authorization_code",
      "refresh_token",
      "client_credentials",
      ...(offersDeviceGrant ? [DEVICE_CODE_GRANT_TYPE] : []),
      ...(assertions.offered ? [JWT_BEARER_GRANT_TYPE] : []),
    ],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: authMethods,
    token_endpoint_auth_signing_alg_values_supported: [...JWT_ALGORITHMS],
    revocation_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_signing_alg_values_supported: [...JWT_ALGORITHMS],
    scopes_supported: [...CHAT_SCOPES, OFFLINE_ACCESS_SCOPE],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    ...(dpop.offered ? { dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS] } : {}),
  };
}
