/** Public entry of `chat-mcp-bridge/testing`: msw handlers serving `/v2`, and the whole reference server as an in-process fetch. */
import { type HttpHandler, http } from "msw";
import { DEFAULT_BASE_URL } from "../config/index.js";
import type { ChatService, RateLimitOptions } from "../server/context.js";
import { createV2FetchHandler } from "../server/v2-fetch.js";

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
  const v2 = createV2FetchHandler({
    baseUrl,
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    ...(options.requireSso === false ? { requireSso: false } : {}),
  });
  return {
    handlers: [
      http.all(new RegExp(`^${escapeRegExp(baseUrl)}/v2(?:[/?#]|$)`), ({ request }) => v2.fetch(request)),
    ],
    baseUrl,
    apiKeys: { ...v2.apiKeys },
    get service() {
      return v2.service;
    },
    reset: () => v2.reset(),
    completeSso: (slug) => v2.completeSso(slug),
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export { createInProcessReferenceServer, type InProcessReferenceServer } from "../server/in-process.js";
