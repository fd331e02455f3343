/** OAuth 2.1 authorization server of the reference server: metadata, registration, authorize + consent, token, revoke. */
import { authorizationHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/authorize.js";
import { metadataHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/metadata.js";
import { clientRegistrationHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/register.js";
import { revocationHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/revoke.js";
import { tokenHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/token.js";
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import type { ServerContext } from "../context.js";
import type { OAuthServerOptions } from "../options.js";
import { ConsentBrowserBinding } from "./browser-binding.js";
import { CONSENT_PATH, mountConsentPage } from "./consent.js";
import { DEFAULT_ACCESS_TOKEN_TTL_SECONDS, OAuthGrants } from "./grants.js";
import {
  CHAT_SCOPES,
  OFFLINE_ACCESS_SCOPE,
  PENDING_AUTHORIZATION_TTL_MS,
  ReferenceOAuthProvider,
} from "./provider.js";
import { limitByClientIp, oauthLimiters } from "./rate-limits.js";
import { redirectUriProblem } from "./redirect-uris.js";

export type {
  OAuthRateLimits,
  OAuthRegistrationLimits,
  OAuthServerOptions,
  PreRegisteredOAuthClient,
} from "../options.js";
export { DEFAULT_OAUTH_RATE_LIMITS } from "../rate-limit.js";
export { CONSENT_BINDING_COOKIE_PREFIX } from "./browser-binding.js";
export { DEFAULT_MAX_REGISTERED_CLIENTS, DEFAULT_UNUSED_REGISTRATION_TTL_SECONDS } from "./grants.js";
export { CHAT_SCOPES, OFFLINE_ACCESS_SCOPE } from "./provider.js";

/** RFC 8707 resource identifiers served here. */
export function resourceUrls(baseUrl: string): { mcp: string; v2: string } {
  return { mcp: `${baseUrl}/mcp`, v2: `${baseUrl}/v2` };
}

/** RFC 9728 metadata URL of a resource of this server (`/mcp` or `/v2`). */
export function protectedResourceMetadataUrl(baseUrl: string, resourcePath: "/mcp" | "/v2"): string {
  return `${baseUrl}/.well-known/oauth-protected-resource${resourcePath}`;
}

export function mountOAuth(app: Express, ctx: ServerContext): void {
  const options = ctx.options as OAuthServerOptions;
  const now = options.oauthNow ?? Date.now;
  const resources = resourceUrls(ctx.baseUrl);
  const registrationLimits = options.oauthRegistrationLimits ?? {};
  const grants = new OAuthGrants({
    store: ctx.store,
    now,
    accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL_SECONDS,
    ...(registrationLimits.unusedTtlSeconds !== undefined
      ? { unusedRegistrationTtlMs: registrationLimits.unusedTtlSeconds * 1000 }
      : {}),
    ...(registrationLimits.maxClients !== undefined
      ? { maxRegisteredClients: registrationLimits.maxClients }
      : {}),
  });
  const limiters = oauthLimiters(options.oauthRateLimit, now);
  const browserBinding = new ConsentBrowserBinding(
    () => ctx.baseUrl.startsWith("https:"),
    PENDING_AUTHORIZATION_TTL_MS,
  );
  for (const client of options.oauthClients ?? []) {
    grants.saveClient({
      client_name: client.client_id,
      ...client,
      token_endpoint_auth_method: client.client_secret ? "client_secret_basic" : "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      client_id_issued_at: Math.floor(now() / 1000),
    });
  }
  const provider = new ReferenceOAuthProvider({
    grants,
    resources: [resources.mcp, resources.v2],
    now,
    consentPath: CONSENT_PATH,
    browserBinding,
    ...(options.autoApprove ? { autoApprove: autoApproval(ctx, options.autoApprove) } : {}),
  });

  app.use(
    "/.well-known/oauth-authorization-server",
    metadataHandler(authorizationServerMetadata(ctx.baseUrl)),
  );
  for (const path of ["/mcp", "/v2"] as const) {
    app.use(
      `/.well-known/oauth-protected-resource${path}`,
      metadataHandler(protectedResourceMetadata(ctx.baseUrl, `${ctx.baseUrl}${path}`)),
    );
  }
  app.use(
    "/authorize",
    limitByClientIp(limiters.authorize, "page"),
    parseForm,
    refuseBadRedirectUri,
    echoStateOnErrors,
    authorizationHandler({ provider, rateLimit: false }),
  );
  app.use(
    "/token",
    limitByClientIp(limiters.token, "json"),
    clientSecretBasic,
    tokenHandler({ provider, rateLimit: false }),
  );
  app.use("/revoke", clientSecretBasic, revocationHandler({ provider, rateLimit: false }));
  app.use(
    "/register",
    limitByClientIp(limiters.register, "json"),
    express.json({ limit: "64kb" }),
    refuseBadRegisteredRedirectUris,
    (req: Request, res: Response, next: NextFunction) => {
      if (req.method !== "POST" || grants.makeRoomForRegistration()) return next();
      res.status(503).set("retry-after", "3600").json({
        error: "temporarily_unavailable",
        error_description: "The server holds as many client registrations as it keeps; try again later.",
      });
    },
    clientRegistrationHandler({
      clientsStore: provider.clientsStore,
      rateLimit: false,
      clientSecretExpirySeconds: 0,
    }),
  );
  mountConsentPage(app, {
    provider,
    sessions: ctx.sessions,
    accounts: ctx.accounts,
    binding: browserBinding,
  });

  ctx.tokenVerifiers.push((token) => grants.principalFor(token));
}

function authorizationServerMetadata(baseUrl: string): OAuthMetadata {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/authorize`,
    token_endpoint: `${baseUrl}/token`,
    registration_endpoint: `${baseUrl}/register`,
    revocation_endpoint: `${baseUrl}/revoke`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
    revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
    scopes_supported: [...CHAT_SCOPES, OFFLINE_ACCESS_SCOPE],
  };
}

function protectedResourceMetadata(baseUrl: string, resource: string): OAuthProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [baseUrl],
    scopes_supported: [...CHAT_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: resource.endsWith("/mcp") ? "Chat service MCP server" : "Chat service REST API v2",
  };
}

/** The account to approve for, and the first seeded person in it (the SSO page lets only that person complete SSO). */
function autoApproval(ctx: ServerContext, slug: string): { account: string; userId?: string } {
  if (!ctx.accounts.has(slug)) {
    throw new Error(
      `autoApprove: no account or team "${slug}"; use one of ${[...ctx.accounts.keys()].join(", ")}.`,
    );
  }
  const user = [...ctx.users.values()].find((candidate) => candidate.memberOf.includes(slug));
  return { account: slug, ...(user ? { userId: user.id } : {}) };
}

const parseForm = express.urlencoded({ extended: false, limit: "16kb" });

/** RFC 6749 §4.1.2.1: error redirects carry the request's `state` (the SDK's handler drops it on invalid parameters). */
function echoStateOnErrors(req: Request, res: Response, next: NextFunction): void {
  const params = (req.method === "POST" ? req.body : req.query) as Record<string, unknown> | undefined;
  const state = params?.state;
  if (typeof state === "string") {
    const redirect = res.redirect.bind(res) as (status: number, url: string) => void;
    res.redirect = ((status: number, url: string) => {
      const target = URL.canParse(url) ? new URL(url) : null;
      if (target?.searchParams.has("error") && !target.searchParams.has("state")) {
        target.searchParams.set("state", state);
        redirect(status, target.href);
      } else {
        redirect(status, url);
      }
    }) as Response["redirect"];
  }
  next();
}

/** RFC 6749 §2.3.1 `client_secret_basic`: moves the Basic credentials into the form fields the SDK's handlers read. */
function clientSecretBasic(req: Request, res: Response, next: NextFunction): void {
  parseForm(req, res, (error?: unknown) => {
    if (error) return next(error);
    const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(req.get("authorization") ?? "");
    if (!match?.[1]) return next();
    const decoded = Buffer.from(match[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const body = (req.body ?? {}) as Record<string, unknown>;
    let clientId: string;
    let clientSecret: string;
    try {
      clientId = decodeURIComponent(decoded.slice(0, Math.max(colon, 0)).replace(/\+/g, " "));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " "));
    } catch {
      clientId = "";
      clientSecret = "";
    }
    if (colon < 0 || !clientId || (body.client_id !== undefined && body.client_id !== clientId)) {
      res.status(401).set("WWW-Authenticate", 'Basic realm="token"').json({
        error: "invalid_client",
        error_description: "Malformed Basic client credentials",
      });
      return;
    }
    req.body = { ...body, client_id: clientId, client_secret: clientSecret };
    next();
  });
}

/** `/authorize` with a redirect URI that could never be registered (e.g. a fragment added): 400, no redirect. */
function refuseBadRedirectUri(req: Request, res: Response, next: NextFunction): void {
  const source = (req.method === "POST" ? req.body : req.query) as Record<string, unknown> | undefined;
  const redirectUri = source?.redirect_uri;
  const problem = typeof redirectUri === "string" ? redirectUriProblem(redirectUri) : null;
  if (problem) {
    res.status(400).json({ error: "invalid_request", error_description: `redirect_uri ${problem}` });
    return;
  }
  next();
}

/** RFC 7591 registration: every redirect URI must be one a client can really receive a code at. */
function refuseBadRegisteredRedirectUris(req: Request, res: Response, next: NextFunction): void {
  const uris = (req.body as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  if (Array.isArray(uris)) {
    for (const uri of uris) {
      const problem = typeof uri === "string" ? redirectUriProblem(uri) : "is not a string";
      if (problem) {
        res.status(400).json({ error: "invalid_redirect_uri", error_description: `redirect_uri ${problem}` });
        return;
      }
    }
  }
  next();
}
