/** The reference server as one fetch-shaped handler: OAuth, `/mcp`, `/v2` and the pages as routes, JSON 404 for the rest. */
import type { ReferenceServerOptions, ServerContext } from "./context.js";
import { createChatCore } from "./core.js";
import { errorJsonResponse, type RouteHandler, requestInfoOf, serviceErrorResponse } from "./http.js";
import { IDEMPOTENCY_COLLECTION, IdempotencyKeys } from "./idempotency.js";
import { createMcpRoutes } from "./mcp/index.js";
import { createOAuthRoutes } from "./oauth/index.js";
import { createPageRoutes } from "./pages.js";
import { DEFAULT_RATE_LIMIT, TokenBucketLimiter } from "./rate-limit.js";
import { ServiceError } from "./service-error.js";
import { CookieSessions } from "./sessions.js";
import { createV2Handler } from "./v2-api.js";

export interface ReferenceApp {
  /**
   * Answers one request. `clientIp` keys the OAuth rate limits; `rawTarget` is the request target as sent (the
   * node edge knows it), so `/v2` sees `..` segments unfolded. Tests call it directly, without a port.
   */
  fetch(request: Request, clientIp?: string, rawTarget?: string): Promise<Response>;
  /** Seeded account or team slug -> dev API key for `/v2`. */
  apiKeys: Record<string, string>;
  /** Publishes `notifications/tools/list_changed` to MCP clients listening for it. */
  toolsChanged(): void;
  /**
   * Read-only (maintenance): the tools that write are withdrawn from `/mcp` (not listed, calls refused) until it is
   * turned off again; each change of the list is announced with `notifications/tools/list_changed` in both eras.
   */
  setReadOnly(readOnly: boolean): void;
  /** Runs the close hooks once (MCP sessions, the data file's fold); a hook that fails is logged. */
  close(): Promise<void>;
}

/** Builds the shared context (store, service, verifiers, SSO, sessions) for `baseUrl`, then the routes over it. */
export function createReferenceApp(options: ReferenceServerOptions, baseUrl: string): ReferenceApp {
  const core = createChatCore({
    ...(options.dataFile ? { dataFile: options.dataFile } : {}),
    baseUrl: () => baseUrl,
    assistantDelayMs: options.assistantDelayMs,
  });
  const rateLimit = options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit;
  const sessions = new CookieSessions(core.users, () => baseUrl.startsWith("https:"));
  const ctx: ServerContext & { sessions: CookieSessions } = {
    ...core,
    baseUrl,
    options,
    sessions,
    // A stopped server leaves its data file as one snapshot line.
    closeHooks: [() => core.store.compact()],
    ...(rateLimit ? { rateLimiter: new TokenBucketLimiter(rateLimit) } : {}),
  };
  // OAuth first: it pushes its token verifier onto ctx.tokenVerifiers and guards the /signin hop to consent.
  const oauth = createOAuthRoutes(ctx);
  const mcp = createMcpRoutes(ctx);
  ctx.closeHooks.push(() => mcp.close());
  const pages = createPageRoutes({ ...core, sessions });
  const v2 = createV2Handler({
    service: ctx.service,
    tokenVerifiers: ctx.tokenVerifiers,
    now: options.oauthNow ?? Date.now,
    sso: ctx.sso,
    ...(ctx.rateLimiter ? { rateLimiter: ctx.rateLimiter } : {}),
    resourceMetadataUrl: () => `${baseUrl}/.well-known/oauth-protected-resource/v2`,
    resource: () => `${baseUrl}/v2`,
    credentialCheck: () => ctx.credentialCheck,
    idempotency: new IdempotencyKeys(ctx.store.collection(IDEMPOTENCY_COLLECTION)),
  });
  const v2Route: RouteHandler = async (request, info) => {
    // Not url.pathname: WHATWG URLs fold "." and "%2e%2e" segments, so "/v2/chats/%2e%2e" would reach another route.
    const path = info.rawPath ?? info.url.pathname;
    return path === "/v2" || path.startsWith("/v2/") ? v2(request, path, info.requestId) : undefined;
  };
  const routes: RouteHandler[] = [oauth.handle, mcp.handle, v2Route, pages];
  let closing: Promise<void> | undefined;
  return {
    async fetch(request, clientIp = "", rawTarget) {
      const info = requestInfoOf(request, clientIp, rawTarget);
      for (const route of routes) {
        let response: Response | undefined;
        try {
          response = await route(request, info);
        } catch (error) {
          if (!(error instanceof ServiceError)) console.error("reference server: request failed:", error);
          response = errorJsonResponse(error, info.requestId);
        }
        if (response) return withRequestId(response, info.requestId);
      }
      const message = `No route ${request.method} ${info.url.pathname}.`;
      return withRequestId(serviceErrorResponse("not_found", message, info.requestId), info.requestId);
    },
    apiKeys: core.apiKeys,
    toolsChanged: () => mcp.toolsChanged(),
    setReadOnly: (readOnly) => mcp.setReadOnly(readOnly),
    close: () => {
      closing ??= (async () => {
        for (const hook of ctx.closeHooks) {
          try {
            await hook();
          } catch (error) {
            console.error("reference server: close hook failed:", error);
          }
        }
      })();
      return closing;
    },
  };
}

function withRequestId(response: Response, requestId: string): Response {
  if (response.headers.has("x-request-id")) return response;
  try {
    response.headers.set("x-request-id", requestId);
    return response;
  } catch {
    // Immutable headers (a Response from fetch): copy them.
    const headers = new Headers(response.headers);
    headers.set("x-request-id", requestId);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}
