/** The reference server as one fetch-shaped handler: `/mcp` on the fetch routes, the rest (pages, OAuth, `/v2`) still on the express app behind it. */
import express, { type Express } from "express";
import type { ServerContext } from "./context.js";
import { type RequestInfo, type RouteHandler, requestInfoOf } from "./http.js";
import { createMcpRoutes } from "./mcp/index.js";
import { mountOAuth } from "./oauth/index.js";
import { mountPages } from "./pages.js";
import type { TokenBucketLimiter } from "./rate-limit.js";
import { errorHandler, mountRest, notFoundHandler, requestIdMiddleware } from "./rest.js";
import type { CookieSessions } from "./sessions.js";
import type { SsoTickets } from "./sso.js";

/** The context with the concrete parts this package builds (the OAuth/MCP parts see it as `ServerContext`). */
export interface ReferenceContext extends ServerContext {
  sessions: CookieSessions;
  sso: SsoTickets;
  rateLimiter?: TokenBucketLimiter;
}

export interface ReferenceHandler {
  /** Answers a request of the fetch routes; `undefined` for paths still served by `legacyApp`. */
  fetch(request: Request, clientIp?: string): Promise<Response | undefined>;
  /** The express app of the routes not yet moved to fetch handlers (OAuth, pages, `/v2`). */
  legacyApp: Express;
  /** Publishes `notifications/tools/list_changed` to MCP clients listening for it. */
  toolsChanged(): void;
}

export function createReferenceHandler(ctx: ReferenceContext): ReferenceHandler {
  const mcp = createMcpRoutes(ctx);
  ctx.closeHooks.push(() => mcp.close());
  const routes: RouteHandler[] = [mcp.handle];
  return {
    async fetch(request, clientIp = "") {
      const info: RequestInfo = requestInfoOf(request, clientIp);
      for (const route of routes) {
        const response = await route(request, info);
        if (response) return withRequestId(response, info.requestId);
      }
      return undefined;
    },
    legacyApp: createExpressApp(ctx),
    toolsChanged: () => mcp.toolsChanged(),
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

function createExpressApp(ctx: ReferenceContext): Express {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.use(requestIdMiddleware);
  mountOAuth(app, ctx);
  mountRest(app, ctx);
  mountPages(app, ctx);
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
