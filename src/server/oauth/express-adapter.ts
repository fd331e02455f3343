/**
 * Temporary: mounts the fetch-shaped OAuth routes on the express app until the server is one fetch handler
 * (then `createOAuthRoutes(ctx).handle` joins the route list and this file goes).
 */
import type { Express, Request as ExpressRequest, Response as ExpressResponse, NextFunction } from "express";
import type { ServerContext } from "../context.js";
import { requestInfoOf } from "../http.js";
import { createOAuthRoutes } from "./routes.js";

const OAUTH_PATHS =
  /^\/(?:\.well-known\/oauth-(?:authorization-server|protected-resource\/(?:mcp|v2))|authorize|token|revoke|register|oauth\/consent|signin)$/;
const MAX_ADAPTED_BODY_BYTES = 64 * 1024;

export function mountOAuth(app: Express, ctx: ServerContext): void {
  const routes = createOAuthRoutes(ctx);
  app.use((req: ExpressRequest, res: ExpressResponse, next: NextFunction) => {
    if (!OAUTH_PATHS.test(req.path)) return next();
    void (async () => {
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const body = hasBody ? await readCapped(req) : undefined;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
        else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      }
      if (body === null) {
        // The rest of the body is not read: the connection cannot be reused.
        res
          .status(413)
          .set("connection", "close")
          .json({ error: "invalid_request", error_description: "The request body is too large." });
        return;
      }
      const request = new Request(`${ctx.baseUrl}${req.originalUrl}`, {
        method: req.method,
        headers,
        ...(body !== undefined ? { body: new Uint8Array(body) } : {}),
      });
      const response = await routes.handle(
        request,
        requestInfoOf(request, req.socket.remoteAddress ?? "unknown"),
      );
      if (!response) {
        // The sign-in page reads the form this adapter already consumed.
        if (body !== undefined) req.body = Object.fromEntries(new URLSearchParams(body.toString("utf8")));
        return next();
      }
      res.status(response.status);
      response.headers.forEach((value, name) => {
        if (name !== "set-cookie") res.setHeader(name, value);
      });
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) res.setHeader("set-cookie", cookies);
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch(next);
  });
}

/** The body, or null past the cap. */
async function readCapped(req: ExpressRequest): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > MAX_ADAPTED_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
