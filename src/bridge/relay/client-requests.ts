/** The client's requests in flight, as the bridge's edge sees them: progress only for a request still waiting, and a word in the log when the client gives up on a write, and when that write finishes after all. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { BridgeLog } from "../log/log.js";
import {
  isJsonObject as isObject,
  isRequest,
  isResponse,
  type JsonObject as Json,
  requestKey,
} from "../messages/jsonrpc.js";

/** Tools whose late answer is worth a log line: they create or change something the person may look for. */
const WRITES_WORTH_NAMING = new Set(["create_chat", "send_message", "resolve_task"]);

/** Cancelled writes kept for a late answer's log line (a relay may never answer them): the oldest go first. */
const MAX_CANCELLED_KEPT = 100;

/** A chat id as the server makes them: anything else a client sends is not repeated in the log. */
const CHAT_ID = /^[A-Za-z0-9_-]{1,64}$/;

interface InFlight {
  method: string;
  tool?: string | undefined;
  /** The chat a write goes to (`send_message`, `resolve_task`), when its id looks like one. */
  chatId?: string | undefined;
  progressToken?: string | undefined;
  cancelled: boolean;
}

export class ClientRequests {
  readonly #inFlight = new Map<string, InFlight>();
  /** Progress token -> the request it belongs to. */
  readonly #tokens = new Map<string, string>();
  readonly #cancelled: string[] = [];

  constructor(private readonly log: BridgeLog) {}

  fromClient(message: JSONRPCMessage): void {
    if (isRequest(message)) {
      const params = isObject(message.params) ? message.params : {};
      const meta = isObject(params._meta) ? params._meta : {};
      const token = meta.progressToken;
      const progressToken = token === undefined ? undefined : requestKey(token);
      const tool =
        message.method === "tools/call" && typeof params.name === "string" ? params.name : undefined;
      const chatId = isObject(params.arguments) ? params.arguments.chatId : undefined;
      this.#inFlight.set(requestKey(message.id), {
        method: message.method,
        tool,
        chatId: typeof chatId === "string" && CHAT_ID.test(chatId) ? chatId : undefined,
        progressToken,
        cancelled: false,
      });
      if (progressToken) this.#tokens.set(progressToken, requestKey(message.id));
      return;
    }
    const { method, params } = message as { method?: unknown; params?: unknown };
    if (method === "notifications/cancelled" && isObject(params)) {
      const key = requestKey(params.requestId);
      const request = this.#inFlight.get(key);
      if (request && !request.cancelled) this.#stopWaiting(key, request, params.requestId as RequestId);
    }
  }

  /** A message on its way to the client: false when it must not go (progress for a request no longer waiting). */
  toClient(message: JSONRPCMessage): boolean {
    if (isResponse(message)) {
      this.#answered(message.id, message as Json);
      return true;
    }
    const { method, params } = message as { method?: unknown; params?: unknown };
    if (method !== "notifications/progress") return true;
    const token = isObject(params) ? params.progressToken : undefined;
    if (token !== undefined && this.#tokens.has(requestKey(token))) return true;
    this.log.debug("dropped a progress notification for a request that is answered or cancelled");
    return false;
  }

  #stopWaiting(key: string, request: InFlight, id: RequestId): void {
    request.cancelled = true;
    if (request.progressToken) this.#tokens.delete(request.progressToken);
    // Only a write's late answer is worth waiting for; the others are forgotten now.
    if (!request.tool || !WRITES_WORTH_NAMING.has(request.tool)) {
      this.#inFlight.delete(key);
      return;
    }
    // Said now: a relay that passes the cancellation on (or ends the request's stream) may never see an answer.
    this.log.info(cancelledWriteLine(request.tool, id, request.chatId));
    this.#cancelled.push(key);
    if (this.#cancelled.length > MAX_CANCELLED_KEPT) this.#inFlight.delete(this.#cancelled.shift()!);
  }

  #answered(id: RequestId, answer: Json): void {
    const key = requestKey(id);
    const request = this.#inFlight.get(key);
    if (!request) return;
    this.#inFlight.delete(key);
    if (request.progressToken && this.#tokens.get(request.progressToken) === key)
      this.#tokens.delete(request.progressToken);
    if (request.cancelled && request.tool && WRITES_WORTH_NAMING.has(request.tool)) {
      this.#cancelled.splice(this.#cancelled.indexOf(key), 1);
      this.log.info(lateAnswerLine(request.tool, id, answer));
    }
  }
}

/** A write the client cancelled before its answer: what may have happened, and where the person can look. */
function cancelledWriteLine(tool: string, id: RequestId, chatId: string | undefined): string {
  const where = chatId ? `list_messages with chatId "${chatId}"` : "list_chats";
  return (
    `${tool} #${String(id)}${chatId ? ` (chat ${chatId})` : ""} was cancelled by the client before the server ` +
    `answered: the server was asked to stop, but it may or may not have run. Look before running it again (${where}).`
  );
}

/** What a write the client stopped waiting for did after all, named so the person can find it. */
function lateAnswerLine(tool: string, id: RequestId, answer: Json): string {
  const result = isObject(answer.result) ? answer.result : undefined;
  const structured = result && isObject(result.structuredContent) ? result.structuredContent : undefined;
  const chatId = structured?.chatId ?? (tool === "create_chat" ? structured?.id : undefined);
  const outcome =
    result && result.isError !== true
      ? `it completed${typeof chatId === "string" ? ` (chat ${chatId})` : ""}`
      : "it failed";
  return (
    `${tool} #${String(id)} was answered after the client stopped waiting: ${outcome}. ` +
    "Look before running it again (list_chats, list_messages)."
  );
}
