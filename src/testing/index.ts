/** Public entry of `chat-mcp-bridge/testing`: msw handlers serving `/v2` from the reference server's own chat service. */
import { type HttpHandler, HttpResponse, http } from "msw";
import { DEFAULT_BASE_URL } from "../config/index.js";
import type { ChatService, RateLimitOptions } from "../server/context.js";
import { ServiceError } from "../server/context.js";
import { createChatCore } from "../server/core.js";
import { TokenBucketLimiter } from "../server/rate-limit.js";
import { Store } from "../server/store.js";
import {
  createV2Handler,
  errorResponse,
  MAX_BODY_BYTES,
  requestIdFrom,
  type V2Handler,
  type V2Response,
} from "../server/v2-api.js";

export interface ChatHandlersOptions {
  /** Origin (and optional path prefix) the handlers answer for; default `http://127.0.0.1:8787`. */
  baseUrl?: string;
  /** Per-credential token bucket, e.g. `{ capacity: 1, refillPerSecond: 1 }` to provoke 429; off by default. */
  rateLimit?: RateLimitOptions;
  /** When false, `secure-corp` answers without asking for SSO; default true (403 `sso_required` until `completeSso`). */
  requireSso?: boolean;
}

export interface ChatHandlers {
  /** Pass to `setupServer(...handlers)` or `server.use(...handlers)`. */
  handlers: HttpHandler[];
  baseUrl: string;
  /** Seeded slug -> API key (`personal`, `acme`, `studio`, `secure-corp`); stable across `reset()`. */
  apiKeys: Record<string, string>;
  /** The chat service behind the handlers, for arranging state without HTTP. */
  readonly service: ChatService;
  /** Forgets every chat, message and completed SSO; the API keys stay the same. */
  reset(): void;
  /** Completes SSO for the API key of `slug`, as the re-authentication page would. */
  completeSso(slug: string): void;
}

/**
 * msw handlers answering the `/v2` wire format with the same rules, validation and error bodies as
 * `startReferenceServer()`, state in memory:
 *
 *   const chat = createChatHandlers();
 *   const server = setupServer(...chat.handlers);
 *   const client = new ChatClient({ baseUrl: chat.baseUrl, token: chat.apiKeys.acme });
 */
export function createChatHandlers(options: ChatHandlersOptions = {}): ChatHandlers {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, "");
  const limits = options.rateLimit;

  const build = (store?: Store) => {
    const core = createChatCore({ baseUrl: () => baseUrl, ...(store ? { store } : {}) });
    const handle = createV2Handler({
      service: core.service,
      tokenVerifiers: core.tokenVerifiers,
      ...(options.requireSso === false ? {} : { sso: core.sso }),
      ...(limits ? { rateLimiter: new TokenBucketLimiter(limits) } : {}),
      resourceMetadataUrl: () => `${baseUrl}/.well-known/oauth-protected-resource/v2`,
      resource: () => `${baseUrl}/v2`,
    });
    return { core, handle };
  };
  let current = build();

  const respond = async (request: Request): Promise<Response> => {
    const requestId = requestIdFrom(request.headers.get("x-request-id"));
    const url = new URL(request.url);
    let response: V2Response;
    const body = await readBody(request);
    if (body === TOO_LARGE) {
      response = errorResponse(
        new ServiceError("payload_too_large", `The request body is larger than ${MAX_BODY_BYTES} bytes.`),
        requestId,
      );
    } else {
      response = await (current.handle as V2Handler)({
        method: request.method,
        path: url.pathname.slice(basePath.length),
        query: url.searchParams,
        authorization: request.headers.get("authorization"),
        body,
        requestId,
      });
    }
    return HttpResponse.json(response.body as Record<string, unknown>, {
      status: response.status,
      headers: { ...response.headers, "x-request-id": requestId },
    });
  };

  return {
    handlers: [
      http.all(`${baseUrl}/v2`, ({ request }) => respond(request)),
      http.all(`${baseUrl}/v2/*`, ({ request }) => respond(request)),
    ],
    baseUrl,
    apiKeys: { ...current.core.apiKeys },
    get service() {
      return current.core.service;
    },
    reset() {
      const store = new Store();
      for (const apiKey of current.core.store.apiKeys()) store.addApiKey(apiKey);
      current = build(store);
    },
    completeSso(slug) {
      const principal = current.core.tokenVerifiers[0]?.(current.core.apiKeys[slug] ?? "");
      if (!principal || principal instanceof Promise) throw new Error(`No seeded account ${slug}.`);
      current.core.store.markSsoVerified(principal.subject);
    },
  };
}

const TOO_LARGE = Symbol("too large");

async function readBody(request: Request): Promise<string | undefined | typeof TOO_LARGE> {
  if (request.method === "GET" || request.method === "HEAD") return undefined;
  const bytes = await request.arrayBuffer();
  if (bytes.byteLength > MAX_BODY_BYTES) return TOO_LARGE;
  return bytes.byteLength === 0 ? undefined : new TextDecoder().decode(bytes);
}
