/** The `/mcp` endpoint: Host/Origin checks against DNS rebinding, OAuth bearer auth, then stateful streamable-HTTP sessions. */
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { hostHeaderValidation } from "@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js";
import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from "express";

import type { Principal, ServerContext } from "../context.js";
import { CHAT_SCOPES, protectedResourceMetadataUrl } from "../oauth/index.js";
import type { McpEndpointOptions } from "../options.js";
import { insufficientScopeChallenge } from "../v2-api.js";
import {
  DEFAULT_MAX_SESSIONS_PER_CREDENTIAL,
  DEFAULT_SESSION_IDLE_MS,
  McpSessions,
  sendJsonRpcError,
} from "./sessions.js";
import { TOOL_SCOPES } from "./tools.js";

export type { McpEndpointOptions } from "../options.js";
export { ResumableEventStore } from "./event-store.js";
export { registerChatTools } from "./tools.js";

/** Options of the MCP part, read from `ctx.options` (they belong in `ReferenceServerOptions`). */

const LOOPBACK_HOSTNAMES = ["localhost", "127.0.0.1", "[::1]"];

export function mountMcp(app: Express, ctx: ServerContext): void {
  const options = ctx.options as McpEndpointOptions;
  const sessions = new McpSessions({
    tools: { service: ctx.service, sso: ctx.sso },
    idleMs: options.mcpSessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
    maxPerCredential: options.mcpMaxSessionsPerCredential ?? DEFAULT_MAX_SESSIONS_PER_CREDENTIAL,
  });
  ctx.closeHooks.push(() => sessions.closeAll());

  const allowedHostnames = [
    ...new Set([...LOOPBACK_HOSTNAMES, new URL(ctx.baseUrl).hostname, ...(options.mcpAllowedHosts ?? [])]),
  ];
  const bearerAuth = requireBearerAuth({
    verifier: { verifyAccessToken: (token) => verifyMcpToken(ctx, token) },
    resourceMetadataUrl: protectedResourceMetadataUrl(ctx.baseUrl, "/mcp"),
  });
  const authenticate = options.testOnlyUnauthenticatedMcpAccount
    ? testOnlyUnauthenticated(ctx, options.testOnlyUnauthenticatedMcpAccount, bearerAuth)
    : bearerAuth;

  app.all(
    "/mcp",
    hostHeaderValidation(allowedHostnames),
    originPolicy(allowedHostnames),
    authenticate,
    express.json({ limit: "4mb" }),
    requireToolScope(protectedResourceMetadataUrl(ctx.baseUrl, "/mcp")),
    (req: Request, res: Response) => {
      sessions.handle(req, res).catch((error: unknown) => {
        console.error("reference server: MCP request failed:", error);
        if (!res.headersSent) sendJsonRpcError(res, 500, -32603, "Internal error");
      });
    },
    (error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const type = (error as { type?: string }).type;
      if (type === "entity.too.large") sendJsonRpcError(res, 413, -32600, "The request body is too large");
      else if (type === "entity.parse.failed")
        sendJsonRpcError(res, 400, -32700, "Parse error: invalid JSON");
      else sendJsonRpcError(res, 400, -32600, "The request body could not be read");
    },
  );
}

/** Only OAuth access tokens of this server, issued for `/mcp` or for no particular resource (never API keys). */
async function verifyMcpToken(ctx: ServerContext, token: string): Promise<AuthInfo> {
  let principal: Principal | null = null;
  for (const verify of ctx.tokenVerifiers) {
    principal = await verify(token);
    if (principal) break;
  }
  if (!principal) throw new InvalidTokenError("The access token is invalid, expired or revoked");
  if (principal.via !== "oauth") {
    throw new InvalidTokenError("API keys are not accepted on /mcp: connect through OAuth");
  }
  if (principal.resource && principal.resource !== `${ctx.baseUrl}/mcp`) {
    throw new InvalidTokenError("The access token was issued for another resource");
  }
  return toAuthInfo(token, principal);
}

function toAuthInfo(token: string, principal: Principal): AuthInfo {
  return {
    token,
    clientId: principal.clientId ?? "",
    scopes: principal.scopes,
    expiresAt: principal.expiresAt ?? Math.floor(Date.now() / 1000) + 3600,
    extra: { principal },
  };
}

/**
 * A `tools/call` of a tool whose scope the token lacks is answered 403 `insufficient_scope` with the
 * `WWW-Authenticate` challenge naming the scope, so a client can step up (CONTRACT §2, MCP authorization spec).
 */
function requireToolScope(resourceMetadataUrl: string): RequestHandler {
  return (req, res, next) => {
    const granted = req.auth?.scopes ?? [];
    const messages: unknown[] = Array.isArray(req.body) ? req.body : [req.body];
    for (const message of messages) {
      const call = message as { method?: unknown; params?: { name?: unknown } } | null;
      if (call?.method !== "tools/call" || typeof call.params?.name !== "string") continue;
      const scope = TOOL_SCOPES[call.params.name as keyof typeof TOOL_SCOPES];
      if (!scope || granted.includes(scope)) continue;
      res.set("www-authenticate", insufficientScopeChallenge(scope, resourceMetadataUrl));
      sendJsonRpcError(res, 403, -32001, `insufficient_scope: ${call.params.name} needs the ${scope} scope`);
      return;
    }
    next();
  };
}

/**
 * Rejects a browser `Origin` whose host is not ours (DNS rebinding); requests without Origin pass. Allowed origins
 * (browser-based MCP clients on loopback) get CORS headers, and their preflight is answered before auth.
 */
function originPolicy(allowedHostnames: readonly string[]): RequestHandler {
  return (req, res, next) => {
    const origin = req.get("origin");
    if (origin === undefined) return next();
    const hostname = URL.canParse(origin) ? new URL(origin).hostname : null;
    if (hostname === null || !allowedHostnames.includes(hostname)) {
      sendJsonRpcError(res, 403, -32000, "Invalid Origin");
      return;
    }
    res.set({
      "access-control-allow-origin": origin,
      "access-control-expose-headers": "mcp-session-id, mcp-protocol-version, www-authenticate",
      vary: "Origin",
    });
    if (req.method === "OPTIONS") {
      res
        .status(204)
        .set({
          "access-control-allow-methods": "GET, POST, DELETE",
          "access-control-allow-headers":
            "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id",
          "access-control-max-age": "600",
        })
        .end();
      return;
    }
    next();
  };
}

/** The test-only switch: no `Authorization` header means the configured account; a header is still verified. */
function testOnlyUnauthenticated(
  ctx: ServerContext,
  account: string,
  bearerAuth: RequestHandler,
): RequestHandler {
  if (!ctx.accounts.has(account)) {
    throw new Error(`testOnlyUnauthenticatedMcpAccount: no account or team "${account}".`);
  }
  console.warn(`reference server: TEST ONLY: /mcp accepts unauthenticated requests as "${account}".`);
  const principal: Principal = {
    account,
    subject: `test-only-unauthenticated:${account}`,
    via: "oauth",
    clientId: "test-only-unauthenticated",
    scopes: [...CHAT_SCOPES],
  };
  return (req, res, next) => {
    if (req.get("authorization") !== undefined) return bearerAuth(req, res, next);
    req.auth = toAuthInfo("", principal);
    next();
  };
}
