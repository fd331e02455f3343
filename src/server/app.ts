/** The reference server's express app: pages, OAuth, MCP and `/v2`, with request ids and JSON errors everywhere. */
import express, { type Express } from "express";
import type { ServerContext } from "./context.js";
import { mountMcp } from "./mcp/index.js";
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

export function createReferenceApp(ctx: ReferenceContext): Express {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.use(requestIdMiddleware);
  mountOAuth(app, ctx);
  mountMcp(app, ctx);
  mountRest(app, ctx);
  mountPages(app, ctx);
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
