/** Express adapter of `/v2`: raw body up to 1 MiB, then the framework-free handler of v2-api.ts. */
import type { Duplex } from "node:stream";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { type ChatService, ServiceError, type SsoGate, type TokenVerifier } from "./context.js";
import { newId } from "./ids.js";
import type { TokenBucketLimiter } from "./rate-limit.js";
import { createV2Handler, errorResponse, MAX_BODY_BYTES, requestIdFrom, type V2Response } from "./v2-api.js";

export interface RestContext {
  baseUrl: string;
  service: ChatService;
  tokenVerifiers: TokenVerifier[];
  sso: SsoGate;
  rateLimiter?: TokenBucketLimiter;
}

/** RFC 9728 metadata URL of the `/v2` resource (served by the OAuth part). */
export function restResourceMetadataUrl(baseUrl: string): string {
  return `${baseUrl}/.well-known/oauth-protected-resource/v2`;
}

export function mountRest(app: Express, ctx: RestContext): void {
  const handle = createV2Handler({
    service: ctx.service,
    tokenVerifiers: ctx.tokenVerifiers,
    sso: ctx.sso,
    ...(ctx.rateLimiter ? { rateLimiter: ctx.rateLimiter } : {}),
    resourceMetadataUrl: () => restResourceMetadataUrl(ctx.baseUrl),
    resource: () => `${ctx.baseUrl}/v2`,
  });
  app.use("/v2", express.raw({ type: () => true, limit: MAX_BODY_BYTES }), async (req, res) => {
    const url = new URL(req.originalUrl, "http://localhost");
    const response = await handle({
      method: req.method,
      // Not url.pathname: WHATWG URLs fold "." and "%2e%2e" segments, so "/v2/chats/%2e%2e" would reach another route.
      path: `${req.baseUrl}${req.path}`,
      query: url.searchParams,
      authorization: req.get("authorization"),
      body: bodyText(req.body),
      requestId: requestIdOf(res),
    });
    sendV2Response(res, response);
  });
}

/** The raw body as text; tolerates a JSON parser mounted before `/v2` by re-serialising what it parsed. */
function bodyText(body: unknown): string | undefined {
  if (Buffer.isBuffer(body)) return body.toString("utf8");
  if (typeof body === "string") return body;
  return body === undefined || body === null ? undefined : JSON.stringify(body);
}

/** Writes the answer straight to the socket: no ETag hashing or freshness checks on the API's hot path. */
export function sendV2Response(res: Response, response: V2Response): void {
  const body = response.body === undefined ? "" : JSON.stringify(response.body);
  res.status(response.status).set(response.headers);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  // Chats are private to a credential: no shared or browser cache may keep them.
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

/** Echoes a sane incoming `x-request-id` or makes one, on every response. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const requestId = requestIdFrom(req.get("x-request-id"));
  res.locals.requestId = requestId;
  res.set("x-request-id", requestId);
  next();
}

export function requestIdOf(res: Response): string {
  return typeof res.locals.requestId === "string" ? res.locals.requestId : newId("req");
}

/** Last route: every unknown path gets the JSON error body too. */
export function notFoundHandler(req: Request, res: Response): void {
  sendV2Response(
    res,
    errorResponse(new ServiceError("not_found", `No route ${req.method} ${req.path}.`), requestIdOf(res)),
  );
}

/** Maps body-parser and other thrown errors to the error body of CONTRACT §2. */
export function errorHandler(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) {
    next(error);
    return;
  }
  const failure = error as { type?: string; status?: number; statusCode?: number };
  const status = failure.status ?? failure.statusCode ?? 500;
  let mapped: ServiceError | unknown = error;
  if (error instanceof ServiceError) mapped = error;
  else if (failure.type === "entity.too.large" || status === 413) {
    mapped = new ServiceError(
      "payload_too_large",
      `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
    );
  } else if (failure.type === "entity.parse.failed") {
    mapped = new ServiceError("bad_request", "The request body is not valid JSON.");
  } else if (status >= 400 && status < 500) {
    mapped = new ServiceError("bad_request", "The request could not be read.");
  } else {
    console.error("reference server: request failed:", error);
  }
  sendV2Response(res, errorResponse(mapped, requestIdOf(res)));
}

/**
 * Answers requests that Node's HTTP parser refuses before any route runs (bad request line, control characters
 * in headers, headers over 16 KB) with the JSON error body too, instead of Node's empty 400/431.
 */
export function answerUnparsableRequest(error: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const timedOut = error.code === "ERR_HTTP_REQUEST_TIMEOUT";
  const headersTooLarge = error.code === "HPE_HEADER_OVERFLOW";
  const status = timedOut ? 408 : 400;
  const requestId = newId("req");
  const payload = JSON.stringify({
    error: {
      code: timedOut ? "request_timeout" : "bad_request",
      message: timedOut
        ? "The request was not received in time."
        : headersTooLarge
          ? "The request headers are too large (16 KB at most)."
          : "The request is not valid HTTP.",
      requestId,
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${timedOut ? "Request Timeout" : "Bad Request"}\r\n` +
      "Content-Type: application/json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(payload)}\r\n` +
      `x-request-id: ${requestId}\r\n` +
      "Connection: close\r\n\r\n" +
      payload,
  );
}
