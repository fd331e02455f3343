/** The `/v2` API as one fetch-shaped handler (`Request` in, `Response` out) over an in-memory chat core, with test controls. */
import type { ChatService, RateLimitOptions } from "./context.js";
import { createChatCore } from "./core.js";
import { requestIdFrom } from "./http.js";
import { IDEMPOTENCY_COLLECTION, IdempotencyKeys } from "./idempotency.js";
import { TokenBucketLimiter } from "./rate-limit.js";
import { Store } from "./store.js";
import { createV2Handler } from "./v2-api.js";

export interface V2FetchHandlerOptions {
  /** Origin (and optional path prefix) of the links the service builds and of the paths it answers. */
  baseUrl: string;
  /** Per-credential token bucket; off when absent. */
  rateLimit?: RateLimitOptions;
  /** When false, `secure-corp` answers without asking for SSO; default true. */
  requireSso?: boolean;
}

export interface V2FetchHandler {
  /** Answers one request under `<baseUrl>/v2` with the rules, validation and error bodies of the reference server. */
  fetch(request: Request): Promise<Response>;
  /** Seeded slug -> API key; stable across `reset()`. */
  readonly apiKeys: Record<string, string>;
  /** The chat service behind the handler, for arranging state without HTTP. */
  readonly service: ChatService;
  /** Forgets every chat, message and completed SSO; the API keys stay the same. */
  reset(): void;
  /** Completes SSO for the API key of `slug`, as the re-authentication page would. */
  completeSso(slug: string): void;
}

export function createV2FetchHandler(options: V2FetchHandlerOptions): V2FetchHandler {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
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
      idempotency: new IdempotencyKeys(core.store.collection(IDEMPOTENCY_COLLECTION)),
    });
    return { core, handle };
  };
  let current = build();
  const apiKeys = { ...current.core.apiKeys };

  return {
    async fetch(request) {
      const requestId = requestIdFrom(request.headers.get("x-request-id"));
      const path = new URL(request.url).pathname.slice(basePath.length);
      const response = await current.handle(request, path, requestId);
      response.headers.set("x-request-id", requestId);
      return response;
    },
    apiKeys,
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
