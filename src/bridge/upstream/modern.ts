/** The modern upstream: each request one stateless POST (2026-07-28) with the standard headers, answered by JSON or SSE. */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describeNetworkFailure } from "../../internal/network-errors.js";
import { requestNeverSent } from "../../internal/request-failure.js";
import { type BridgeLog, describeError } from "../log/log.js";
import {
  BridgeRequestIds,
  isJsonRpcMessage,
  isJsonObject as isObject,
  isResponse,
  type JsonObject as Json,
} from "../messages/jsonrpc.js";
import { DEFAULT_MAX_MESSAGE_BYTES, jsonShapeProblem, tooLargeText } from "../messages/message-size.js";
import { META_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS } from "../messages/request-model.js";
import {
  type HttpAnswer,
  type HttpExchange,
  isNetworkError,
  outcomeUnknownMessage,
  RemoteHttpError,
  readBounded,
} from "./http/http-exchange.js";
import { EventSizeCap, ServerSentEventParser } from "./http/sse.js";
import { FIRST_RETRY_DELAY_MS, nextRetryDelay, reconnectWindowMs } from "./http/time-outs.js";
import { type ParamHeader, paramHeadersOf, standardHeaders } from "./standard-headers.js";

/** A request's stream ended before its answer, and why: the server may or may not have run it. */
type StreamBroke = { broke: string };

export type UpstreamAnswer = { result: Json } | { error: { code: number; message: string; data?: unknown } };

/** The most of an error body read (its JSON-RPC error), whatever its size: a 1 GiB error page costs nothing. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Times a request whose stream broke before its answer is sent again (with a new id). */
const MAX_REISSUES = 2;
/** Pages of `tools/list` read to learn a tool's schema before calling it. */
const MAX_LIST_PAGES = 20;

export type NotificationSink = (message: JSONRPCMessage) => void;

interface ModernUpstreamOptions {
  url: URL;
  exchange: HttpExchange;
  log: BridgeLog;
  /** A notification on a request's stream (progress, logs), unless the request has its own sink. */
  onNotification?: NotificationSink;
  /** How long a request that never reached the server waits for it (absent: not at all, as for the era probes). */
  reconnectWindowMs?: number;
  maxMessageBytes?: number;
}

/** What the upstream knows of each tool from `tools/list`: its `Mcp-Param-*` headers, and whether a retry is harmless. */
interface KnownTool {
  headers: ParamHeader[];
  repeatable: boolean;
}

export class ModernUpstream {
  readonly #options: ModernUpstreamOptions;
  readonly #tools = new Map<string, KnownTool>();
  readonly #ids = new BridgeRequestIds("post");
  #protocolVersion = "2026-07-28";
  /** Set once the server answered anything over HTTP: before that, the shorter first-contact window applies. */
  #reached = false;
  /** Set when a reconnect window ran out: requests are answered at once until the server answers again. */
  #unreachable = false;

  constructor(options: ModernUpstreamOptions) {
    this.#options = options;
  }

  get #maxMessageBytes(): number {
    return this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  /** The revision stamped on requests (one the server listed in `supportedVersions`). */
  get protocolVersion(): string {
    return this.#protocolVersion;
  }

  set protocolVersion(version: string) {
    this.#protocolVersion = version;
  }

  /**
   * Sends one request (its params carry the `_meta` envelope). A `tools/list` answer loses the tools with invalid
   * `x-mcp-header` annotations (the spec says so); a call of a tool not yet listed lists first, for its headers.
   */
  async request(
    method: string,
    params: Json,
    signal?: AbortSignal,
    onNotification?: NotificationSink,
  ): Promise<UpstreamAnswer> {
    if (method === "tools/call" && typeof params.name === "string" && !this.#tools.has(params.name))
      await this.#learnTools(params, signal);
    let answer = await this.#send(method, params, signal, onNotification);
    const agreed = "error" in answer ? mutualVersion(answer.error) : undefined;
    if (agreed) {
      // The server refused the version: the spec's corrective retry, once, with one both sides speak.
      this.#protocolVersion = agreed;
      const meta = isObject(params._meta) ? params._meta : {};
      answer = await this.#send(
        method,
        { ...params, _meta: { ...meta, [META_PROTOCOL_VERSION]: agreed } },
        signal,
        onNotification,
      );
    }
    if (method === "tools/list" && "result" in answer) return { result: this.#checkTools(answer.result) };
    return answer;
  }

  async #learnTools(callParams: Json, signal?: AbortSignal): Promise<void> {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const params: Json = { _meta: callParams._meta, ...(cursor ? { cursor } : {}) };
      const answer = await this.#send("tools/list", params, signal).catch(() => undefined);
      if (!answer || !("result" in answer)) return;
      this.#checkTools(answer.result);
      const next = answer.result.nextCursor;
      if (typeof next !== "string" || this.#tools.has(String(callParams.name))) return;
      cursor = next;
    }
  }

  /** Learns each tool's headers; drops (and logs) tools whose `x-mcp-header` annotations break the rules. */
  #checkTools(result: Json): Json {
    const tools = result.tools;
    if (!Array.isArray(tools)) return result;
    const valid = tools.filter((tool: unknown) => {
      if (!isObject(tool) || typeof tool.name !== "string") return true;
      const checked = paramHeadersOf(tool.inputSchema);
      if ("invalid" in checked) {
        this.#options.log.info(
          `dropped the tool ${JSON.stringify(tool.name)} from tools/list: ${checked.invalid}`,
        );
        this.#tools.delete(tool.name);
        return false;
      }
      const hints = isObject(tool.annotations) ? tool.annotations : {};
      this.#tools.set(tool.name, {
        headers: checked.headers,
        repeatable: hints.readOnlyHint === true || hints.idempotentHint === true,
      });
      return true;
    });
    return valid.length === tools.length ? result : { ...result, tools: valid };
  }

  /** Whether a request may go out again after its stream broke: anything but a call of a tool that may write. */
  #repeatable(method: string, params: Json): boolean {
    if (method !== "tools/call") return true;
    return this.#tools.get(String(params.name))?.repeatable === true;
  }

  async #send(
    method: string,
    params: Json,
    signal?: AbortSignal,
    onNotification?: NotificationSink,
  ): Promise<UpstreamAnswer> {
    const origin = this.#options.url.origin;
    let windowEnds: number | undefined;
    let delayMs = FIRST_RETRY_DELAY_MS;
    for (let attempt = 0; ; attempt++) {
      let outcome: UpstreamAnswer | StreamBroke;
      try {
        outcome = await this.#post(method, params, signal, onNotification);
        this.#reached = true;
        this.#unreachable = false;
      } catch (error) {
        if (signal?.aborted || !isNetworkError(error)) throw error;
        const reason = describeNetworkFailure(error, this.#options.url) ?? describeError(error);
        if (requestNeverSent(error)) {
          // Never written, so sending it again cannot run it twice: wait for the server within the window.
          const window = this.#options.reconnectWindowMs;
          if (window !== undefined && !this.#unreachable) {
            windowEnds ??= Date.now() + reconnectWindowMs(window, !this.#reached);
            if (Date.now() + delayMs <= windowEnds) {
              if (delayMs === FIRST_RETRY_DELAY_MS && this.#reached)
                this.#options.log.info(`cannot reach ${origin}: ${reason}; retrying`);
              await sleep(delayMs, signal);
              delayMs = nextRetryDelay(delayMs);
              attempt--;
              continue;
            }
            this.#unreachable = true;
          }
          // Nothing ran, and the bridge says so in the words the legacy relay uses.
          return noAnswer(`cannot reach ${origin}: ${reason}`);
        }
        outcome = { broke: reason };
      }
      if (!("broke" in outcome)) return outcome;
      if (signal?.aborted) throw signal.reason ?? new Error("cancelled");
      if (!this.#repeatable(method, params)) return noAnswer(outcomeUnknownMessage(origin, outcome.broke));
      if (attempt >= MAX_REISSUES)
        return noAnswer(`the server closed the response stream before answering, ${attempt + 1} times`);
      this.#options.log.debug(
        `${method}: no answer (${outcome.broke}); sending it again with a new id (${attempt + 2} of ${MAX_REISSUES + 1})`,
      );
    }
  }

  async #post(
    method: string,
    params: Json,
    signal?: AbortSignal,
    onNotification?: NotificationSink,
  ): Promise<UpstreamAnswer | StreamBroke> {
    const id = this.#ids.next();
    const tool = method === "tools/call" ? this.#tools.get(String(params.name)) : undefined;
    const response = await this.#options.exchange(this.#options.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": envelopeVersion(params) ?? this.#protocolVersion,
        ...standardHeaders(method, params, tool?.headers),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok) return errorAnswer(response);
    const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
    if (type === "application/json") {
      let text: string | undefined;
      try {
        text = await readBounded(response, this.#maxMessageBytes, { whole: true });
      } catch (error) {
        // Cut off mid-answer: as unknown as a stream that broke before its answer, never a malformed answer.
        return { broke: describeNetworkFailure(error, this.#options.url) ?? describeError(error) };
      }
      if (text === undefined)
        return bridgeError(`the server's answer was not relayed: ${tooLargeText(this.#maxMessageBytes)}`);
      const problem = jsonShapeProblem(text, this.#maxMessageBytes);
      if (problem) return bridgeError(`the server's answer was not relayed: ${problem}`);
      return answerOf(parseJson(text), id);
    }
    if (type === "text/event-stream")
      return this.#readStream(response, id, onNotification ?? this.#options.onNotification);
    await response.body?.cancel().catch(() => undefined);
    return bridgeError(`the server answered with an unexpected content type: ${type ?? "none"}`);
  }

  /** Reads a request's SSE stream: notifications to the request's sink; the answer ends it. */
  async #readStream(
    response: HttpAnswer,
    id: string,
    onNotification: NotificationSink | undefined,
  ): Promise<UpstreamAnswer | StreamBroke> {
    let answer: UpstreamAnswer | undefined;
    let oversized = false;
    let refused: string | undefined;
    const parser = new ServerSentEventParser({
      onEvent: (event) => {
        if (answer || !event.data || (event.event && event.event !== "message")) return;
        refused = jsonShapeProblem(event.data, this.#maxMessageBytes);
        if (refused) return;
        const message = parseJson(event.data);
        if (!isJsonRpcMessage(message)) return;
        if (isResponse(message)) {
          if (message.id === id) answer = answerOf(message, id);
        } else if (!("id" in message)) {
          onNotification?.(message);
        }
      },
    });
    const cap = new EventSizeCap(this.#maxMessageBytes, {
      feed: (bytes) => parser.push(bytes),
      discard: () => {
        parser.discardEvent();
        oversized = true;
      },
      dropped: () => undefined,
    });
    let broke = "the server closed the response stream before answering";
    try {
      for await (const chunk of response.body ?? []) {
        cap.push(chunk);
        if (answer || oversized || refused) break;
      }
    } catch (error) {
      broke = describeNetworkFailure(error, this.#options.url) ?? describeError(error);
    }
    await response.body?.cancel().catch(() => undefined);
    if (answer) return answer;
    if (oversized)
      return bridgeError(`the server's answer was not relayed: ${tooLargeText(this.#maxMessageBytes)}`);
    if (refused) return bridgeError(`the server's answer was not relayed: ${refused}`);
    return { broke };
  }
}

/** For an UnsupportedProtocolVersion error (-32022): the newest version in its `supported` list the bridge speaks. */
function mutualVersion(error: { code: number; data?: unknown }): string | undefined {
  if (error.code !== -32022 || !isObject(error.data) || !Array.isArray(error.data.supported))
    return undefined;
  const supported = error.data.supported;
  return MODERN_PROTOCOL_VERSIONS.find((version) => supported.includes(version));
}

/** The protocol version a request's envelope names: the header must say the same. */
function envelopeVersion(params: Json): string | undefined {
  const version = isObject(params._meta) ? params._meta[META_PROTOCOL_VERSION] : undefined;
  return typeof version === "string" ? version : undefined;
}

/** The bridge's errors for a request the server never answered (down, unreachable, its stream broke). */
const NO_ANSWER = new WeakSet<object>();
const noAnswer = (message: string): UpstreamAnswer => {
  const answer = bridgeError(message);
  if ("error" in answer) NO_ANSWER.add(answer.error);
  return answer;
};
/** Whether an error answer is the bridge's own for a request the server never answered: it says nothing of the server. */
export const heardNothing = (error: object): boolean => NO_ANSWER.has(error);

export function bridgeError(message: string, data?: Json): UpstreamAnswer {
  return { error: { code: -32000, message: `chat-mcp-bridge: ${message}`, ...(data ? { data } : {}) } };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function answerOf(value: unknown, id: string): UpstreamAnswer {
  if (isObject(value) && value.id === id) {
    if (isObject(value.result)) return { result: value.result };
    if (isObject(value.error) && typeof value.error.code === "number")
      return { error: value.error as { code: number; message: string; data?: unknown } };
  }
  return bridgeError("the server's answer was not a JSON-RPC response to the request");
}

/** A non-2xx answer: its JSON-RPC error when the (bounded) body holds one, else the status. */
async function errorAnswer(response: HttpAnswer): Promise<UpstreamAnswer> {
  const text = (await readBounded(response, MAX_ERROR_BODY_BYTES, { truncate: true })) ?? "";
  const body = parseJson(text);
  if (isObject(body) && isObject(body.error) && typeof body.error.code === "number")
    return { error: body.error as { code: number; message: string; data?: unknown } };
  if (response.status === 401 || response.status === 403)
    throw new RemoteHttpError(response.status, `the server answered HTTP ${response.status}`);
  return bridgeError(`the server answered HTTP ${response.status}${text ? `: ${text.slice(0, 300)}` : ""}`, {
    httpStatus: response.status,
  });
}

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error("cancelled"));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error("cancelled"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
