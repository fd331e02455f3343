/** The `/v2` route: body read up to 1 MiB, then the framework-free handler of v2-api.ts. */
import type { Duplex } from "node:stream";
import {
  type ChatService,
  type CredentialCheck,
  ServiceError,
  type SsoGate,
  type TokenVerifier,
} from "./context.js";
import { errorJsonResponse, jsonResponse, type RouteHandler, readBodyText } from "./http.js";
import { IDEMPOTENCY_COLLECTION, IdempotencyKeys } from "./idempotency.js";
import { newId } from "./ids.js";
import type { TokenBucketLimiter } from "./rate-limit.js";
import type { Store } from "./store.js";
import { createV2Handler, MAX_BODY_BYTES } from "./v2-api.js";

export interface RestContext {
  baseUrl: string;
  credentialCheck?: CredentialCheck | undefined;
  service: ChatService;
  tokenVerifiers: TokenVerifier[];
  sso: SsoGate;
  rateLimiter?: TokenBucketLimiter;
  /** Where the POSTs' idempotency keys are kept (persisted with the rest when the store has a data file). */
  store: Store;
  /** The OAuth server's clock, by which a token's expiry is judged (`oauthNow`); default the real one. */
  options?: { oauthNow?: (() => number) | undefined };
}

/** RFC 9728 metadata URL of the `/v2` resource (served by the OAuth part). */
export function restResourceMetadataUrl(baseUrl: string): string {
  return `${baseUrl}/.well-known/oauth-protected-resource/v2`;
}

export function createRestRoutes(ctx: RestContext): RouteHandler {
  const handle = createV2Handler({
    service: ctx.service,
    tokenVerifiers: ctx.tokenVerifiers,
    now: ctx.options?.oauthNow ?? Date.now,
    sso: ctx.sso,
    ...(ctx.rateLimiter ? { rateLimiter: ctx.rateLimiter } : {}),
    resourceMetadataUrl: () => restResourceMetadataUrl(ctx.baseUrl),
    resource: () => `${ctx.baseUrl}/v2`,
    credentialCheck: () => ctx.credentialCheck,
    idempotency: new IdempotencyKeys(ctx.store.collection(IDEMPOTENCY_COLLECTION)),
  });
  return async (request, info) => {
    // Not url.pathname: WHATWG URLs fold "." and "%2e%2e" segments, so "/v2/chats/%2e%2e" would reach another route.
    const path = info.rawPath ?? info.url.pathname;
    if (path !== "/v2" && !path.startsWith("/v2/")) return undefined;
    let body: string | undefined;
    if (request.method !== "GET" && request.method !== "HEAD") {
      try {
        body = await readBodyText(request, MAX_BODY_BYTES);
      } catch (error) {
        return errorJsonResponse(
          error instanceof ServiceError
            ? error
            : new ServiceError("bad_request", "The request could not be read."),
          info.requestId,
        );
      }
    }
    const response = await handle({
      method: request.method,
      path,
      query: info.url.searchParams,
      authorization: request.headers.get("authorization"),
      dpop: request.headers.get("dpop"),
      url: `${ctx.baseUrl}${path}`,
      body,
      requestId: info.requestId,
      idempotencyKey: request.headers.get("idempotency-key"),
    });
    // Chats are private to a credential: no shared or browser cache may keep them (jsonResponse: no-store).
    return jsonResponse(response.status, response.body, response.headers);
  };
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
