/** Telling the chat service from some other web server at a URL: the one judgement chat-cli, ChatClient, doctor and the bridge's login share. */

/** An error answer as far as the judgement needs it. */
export interface ServiceAnswer {
  status: number;
  /** The `content-type` header, if any. */
  contentType: string | null | undefined;
  /** True when the body parsed as the service's own error shape (a /v2 error body, a JSON-RPC error). */
  structured?: boolean;
}

// Statuses a proxy or gateway in front of the service may answer with a page of its own: they say nothing of what is
// behind it (sign-in, proxy credentials, timeouts, rate limits, an upstream that is down).
const SAID_BY_GATEWAYS = new Set([401, 407, 408, 429, 502, 503, 504]);

/**
 * True when an error answer cannot have come from the chat service: the service answers every /v2 and MCP error
 * with JSON (a wire error body, a JSON-RPC error) or an event stream, so an HTML page or plain text at a 4xx or 500
 * is another server (a web site, a dev server) at that URL.
 */
export function doesNotLookLikeChatService({
  status,
  contentType,
  structured = false,
}: ServiceAnswer): boolean {
  if (status < 400 || structured || SAID_BY_GATEWAYS.has(status)) return false;
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return !(type === "application/json" || type.endsWith("+json") || type === "text/event-stream");
}

/**
 * The one sentence for such an answer, naming the URL once: `the server at <url> does not look like the chat
 * service (it answered 404 with a text/html page, not the chat service's JSON): no /v2 API and no MCP endpoint there`.
 */
export function notChatServiceMessage(url: string | URL, { status, contentType }: ServiceAnswer): string {
  const type = (contentType ?? "").split(";")[0]?.trim() || "a body without a content type";
  const what = type.startsWith("a ") ? type : `a ${type} page`;
  return (
    `the server at ${String(url)} does not look like the chat service (it answered ${status} with ${what}, ` +
    "not the chat service's JSON): it has no /v2 API or MCP endpoint there"
  );
}

const marked = new WeakSet<object>();

/** Marks an error as "answered by some other server", so the layers above do not read it as the service's 404. */
export function markNotChatService<T extends object>(error: T): T {
  marked.add(error);
  return error;
}

/** True for an error `markNotChatService` marked. */
export function isNotChatService(error: unknown): boolean {
  return typeof error === "object" && error !== null && marked.has(error);
}
