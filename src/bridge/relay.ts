/** The relay: JSON-RPC between the local client (stdio) and the remote MCP server, with session recovery. */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from "@modelcontextprotocol/client";
import { describeNetworkFailure, isLastingNetworkFailure } from "../internal/network-errors.js";
import { redact } from "../internal/redact.js";
import { classifyRequestFailure, requestNeverSent } from "../internal/request-failure.js";
import { wrongEndpointMessage } from "./endpoint-check.js";
import { LegacyFace } from "./faces/legacy.js";
import { RemoteHttpError, StreamableHttpTransport } from "./http-transport.js";
import { isRequest, isResponse } from "./jsonrpc.js";
import { type BridgeLog, describeError } from "./log.js";
import { outcomeUnknownMessage } from "./outcome-unknown.js";
import type { FetchLike } from "./remote-fetch.js";
import type { ToolCallContext, ToolCallStep } from "./steps/index.js";
import type { ToolFilter } from "./tool-filter.js";
import { settleSteps } from "./translate/tool-call.js";
import {
  DEFAULT_RECONNECT_WINDOW_MS,
  FIRST_RETRY_DELAY_MS,
  nextRetryDelay,
  reconnectWindowMs,
} from "./upstream/reconnect-window.js";

/** JSON-RPC error code for failures of the bridge itself (server unreachable, session lost, auth failed). */
export const BRIDGE_ERROR_CODE = -32000;
export { HIDDEN_TOOL_ERROR_CODE } from "./steps/tool-filter.js";

export interface RelayOptions {
  url: URL;
  fetch: FetchLike;
  log: BridgeLog;
  /** Writes one message to the local client (stdout). */
  /**
   * `raw`: the server's JSON text of a message relayed unchanged, to write as is (see LineWriter).
   * `relatedRequestId`: the client request whose response stream carried a server request or notification.
   */
  toClient(message: JSONRPCMessage, raw?: string, relatedRequestId?: RequestId): void;
  /** How long to keep retrying an unreachable server before answering the held requests with an error. */
  reconnectWindowMs?: number;
  /** Builds the remote transport (tests inject fakes); defaults to the streamable-HTTP client. */
  createTransport?: (url: URL, fetch: FetchLike) => RemoteTransport;
  /** Hides tools (`--ignore-tool`, `--read-only`) from every tools/list answer (their calls are refused by its step). */
  toolFilter?: ToolFilter;
  /** Steps every tools/call passes before it is sent (the tool filter's among them). */
  steps?: readonly ToolCallStep[];
}

/** What the relay needs from a remote transport. */
export type RemoteTransport = Pick<
  StreamableHttpTransport,
  | "start"
  | "send"
  | "close"
  | "terminateSession"
  | "setProtocolVersion"
  | "sessionId"
  | "onmessage"
  | "onerror"
  | "onrequestlost"
>;

interface Outbound {
  seq: number;
  message: JSONRPCMessage;
}

interface PendingRequest {
  id: RequestId;
  method: string;
  /** The transport whose POST carried it, once the server accepted it; its answer can only come from there. */
  deliveredOn?: RemoteTransport;
}

// The bridge's own request ids carry a random part: a client id (any string) can never be mistaken for one.
const BRIDGE_ID_PREFIX = `chat-mcp-bridge/${randomUUID()}/`;

const requestKey = (id: RequestId): string => (typeof id === "number" ? `n${id}` : `s${id}`);

const neverAborted = new AbortController().signal;
/** A call sent as a notification cannot wait for the client's answers. */
const refuseToAsk = (): Promise<never> => Promise.reject(new Error("a notification cannot ask the client"));

/** The server forgot the session (it restarted, or expired it): open a new one. */
function isSessionGone(error: unknown): boolean {
  return error instanceof RemoteHttpError && error.status === 404;
}

/** The request never got an HTTP answer: the server is down or unreachable. */
export function isNetworkError(error: unknown): boolean {
  return classifyRequestFailure(error) !== "not-a-request-failure";
}

/**
 * Relays messages both ways. Client messages go out in the order they arrive; while the bridge recovers the
 * session or waits for the server to come back they are held, in order, and sent after. Each client request
 * is answered exactly once: by the server, or by the bridge when the server cannot answer it.
 */
export class Relay {
  readonly #options: RelayOptions;
  readonly #log: BridgeLog;
  readonly #reconnectWindowMs: number;
  /** Lasting failures already logged (see `#answeredAsLastingFailure`). */
  readonly #loggedFailures = new Set<string>();
  #transport: RemoteTransport;
  #seq = 0;
  #bridgeIds = 0;
  #held: Outbound[] = [];
  #recovering: Promise<void> | undefined;
  #needsNewSession = false;
  /** Set after a reconnect window ran out; later failures are answered at once instead of waiting again. */
  #unreachable: string | undefined;
  /** Set once the server answered anything over HTTP. */
  #reached = false;
  #closing = false;
  /** Transports whose session was already checked after a 404 on the event stream. */
  readonly #probed = new WeakSet<RemoteTransport>();
  readonly #pending = new Map<string, PendingRequest>();
  readonly #bridgeWaiters = new Map<string, (message: JSONRPCMessage) => void>();
  /**
   * Tools the server says are safe to call twice (annotations `readOnlyHint` or `idempotentHint`, learned from
   * the tools/list answers that pass through). Any other tools/call is sent again only if it never reached the
   * server: running a write twice (two chats, two messages) is worse than saying the outcome is unknown.
   */
  readonly #repeatableTools = new Map<string, boolean>();
  #initializeRequest: JSONRPCRequest | undefined;
  #protocolVersion: string | undefined;
  /** The client as it declared itself at `initialize`, and the requests the bridge's steps put to it. */
  readonly #face: LegacyFace;

  constructor(options: RelayOptions) {
    this.#options = options;
    this.#face = new LegacyFace(options.toClient);
    this.#log = options.log;
    this.#reconnectWindowMs = options.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS;
    this.#transport = this.#openTransport();
  }

  async start(): Promise<void> {
    await this.#transport.start();
  }

  /** A message from the local client. */
  fromClient(message: JSONRPCMessage): void {
    if (this.#closing) return;
    if (isResponse(message) && this.#face.onClientResponse(message as Record<string, unknown>)) return;
    if ("method" in message && message.method === "tools/call" && this.#options.steps?.length) {
      void this.#throughSteps(message);
      return;
    }
    this.#relayOnward(message);
  }

  /**
   * A tools/call through the steps first: forwarded (its params possibly rewritten), or answered here. A call
   * sent as a notification has no one to answer: anything but `forward` drops it.
   */
  async #throughSteps(message: JSONRPCMessage): Promise<void> {
    const params = (message as { params?: unknown }).params as ToolCallContext["params"] | undefined;
    if (typeof params?.name !== "string") return this.#relayOnward(message);
    const call = { params, client: this.#face.client, notification: !isRequest(message) };
    const outcome = isRequest(message)
      ? await settleSteps(this.#options.steps ?? [], call, this.#face.ask.bind(this.#face), neverAborted)
      : await settleSteps(this.#options.steps ?? [], call, refuseToAsk, neverAborted);
    if (this.#closing) return;
    if (outcome.kind === "forward")
      return this.#relayOnward({ ...message, params: outcome.params } as JSONRPCMessage);
    if (!isRequest(message) || outcome.kind === "drop") {
      this.#log.debug(
        `dropped ${describeMessage(message)}: a tool the bridge refuses, sent with no id to answer`,
      );
      return;
    }
    this.#log.debug(`answered ${describeMessage(message)} locally (${outcome.kind})`);
    const reply =
      outcome.kind === "error"
        ? { jsonrpc: "2.0", id: message.id, error: outcome.error }
        : { jsonrpc: "2.0", id: message.id, result: outcome.result };
    this.#options.toClient(reply as JSONRPCMessage);
  }

  #relayOnward(message: JSONRPCMessage): void {
    if (isRequest(message)) {
      if (message.method === "initialize") {
        this.#initializeRequest = message;
        this.#face.initialize(message.params);
      }
      if (message.method === "logging/setLevel") this.#face.setLogLevel(message.params);
      this.#pending.set(requestKey(message.id), { id: message.id, method: message.method });
    }
    const outbound = { seq: ++this.#seq, message };
    if (this.#recovering) this.#hold(outbound);
    else void this.#send(outbound);
  }

  /** Ends the remote session (best effort, bounded by `timeoutMs`) and stops relaying. */
  async close(timeoutMs = 1000): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    const transport = this.#transport;
    if (transport.sessionId) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([transport.terminateSession().catch(() => undefined), timeout]);
      clearTimeout(timer);
    }
    transport.onerror = undefined;
    this.#face.close();
    await transport.close().catch(() => undefined);
  }

  #openTransport(): RemoteTransport {
    const transport = this.#options.createTransport
      ? this.#options.createTransport(this.#options.url, this.#options.fetch)
      : new StreamableHttpTransport(this.#options.url, this.#options.fetch);
    transport.onmessage = (message, raw, relatedRequestId) =>
      this.#fromServer(transport, message, raw, relatedRequestId);
    transport.onerror = (error) => this.#onTransportError(transport, error);
    transport.onrequestlost = (id, reason) => {
      if (this.#closing || transport !== this.#transport) return;
      if (this.#pending.delete(requestKey(id)))
        this.#options.toClient(errorResponse(id, `chat-mcp-bridge: ${reason}`));
    };
    return transport;
  }

  #fromServer(
    transport: RemoteTransport,
    message: JSONRPCMessage,
    raw?: string,
    relatedRequestId?: RequestId,
  ): void {
    if (this.#closing) return;
    if (isResponse(message)) {
      if (typeof message.id === "string" && message.id.startsWith(BRIDGE_ID_PREFIX)) {
        this.#bridgeWaiters.get(message.id)?.(message);
        return;
      }
      const key = requestKey(message.id);
      const pending = this.#pending.get(key);
      if (!pending) {
        this.#log.debug(`dropped a second answer to request ${String(message.id)}`);
        return;
      }
      this.#pending.delete(key);
      if (pending.method === "tools/list" && "result" in message) {
        this.#learnTools(message.result);
        const filter = this.#options.toolFilter;
        if (filter) {
          const filtered = { ...message, result: filter.filterListResult(message.result) };
          this.#toClientFromServer(filtered as JSONRPCMessage);
          return;
        }
      }
      if (this.#initializeRequest?.id === message.id && "result" in message) {
        const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
        if (typeof version === "string") {
          this.#protocolVersion = version;
          transport.setProtocolVersion(version);
        }
      }
    }
    this.#toClientFromServer(message, raw, relatedRequestId);
  }

  /** `raw` only when the message goes out unchanged (a filtered tools/list is written anew). */
  #toClientFromServer(message: JSONRPCMessage, raw?: string, relatedRequestId?: RequestId): void {
    this.#options.toClient(message, raw, relatedRequestId);
  }

  #learnTools(result: unknown): void {
    const tools = (result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as Array<{ name?: unknown; annotations?: Record<string, unknown> }>) {
      if (typeof tool?.name !== "string") continue;
      const hints = tool.annotations;
      this.#repeatableTools.set(tool.name, hints?.readOnlyHint === true || hints?.idempotentHint === true);
    }
  }

  /** Whether sending this message a second time is harmless (see `#repeatableTools`). */
  #isRepeatable(message: JSONRPCMessage): boolean {
    if (!isRequest(message) || message.method !== "tools/call") return true;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    return typeof name === "string" && this.#repeatableTools.get(name) === true;
  }

  /**
   * The connection broke after a request that must not run twice was written: the server may have run it.
   * It is answered with an error saying so, instead of being sent again.
   */
  #answeredAsOutcomeUnknown(outbound: Outbound, error: unknown): boolean {
    if (!isNetworkError(error) || requestNeverSent(error) || this.#isRepeatable(outbound.message))
      return false;
    this.#answerWithError(
      outbound,
      `chat-mcp-bridge: ${outcomeUnknownMessage(this.#options.url.origin, this.#describe(error))}`,
    );
    return true;
  }

  #onTransportError(transport: RemoteTransport, error: Error): void {
    if (this.#closing) return;
    this.#log.debug(`remote transport: ${this.#describe(error)}`);
    // The event stream came back 404: the server may have forgotten the session while idle, or may just not
    // offer the stream. A ping tells which; a lost session is reopened now so server notifications keep flowing.
    if (
      transport === this.#transport &&
      isSessionGone(error) &&
      transport.sessionId &&
      !this.#probed.has(transport)
    ) {
      this.#probed.add(transport);
      void this.#probeSession(transport);
    }
  }

  async #probeSession(transport: RemoteTransport): Promise<void> {
    if (this.#recovering || !this.#initializeRequest) return;
    const id = `${BRIDGE_ID_PREFIX}ping/${++this.#bridgeIds}`;
    this.#bridgeWaiters.set(id, () => this.#bridgeWaiters.delete(id));
    try {
      await transport.send({ jsonrpc: "2.0", id, method: "ping" });
    } catch (error) {
      this.#bridgeWaiters.delete(id);
      if (transport === this.#transport && isSessionGone(error)) {
        this.#log.info("the server no longer knows this session; opening a new one");
        this.#needsNewSession = true;
        this.#startRecovery();
      }
    }
  }

  async #send(outbound: Outbound): Promise<void> {
    const transport = this.#transport;
    try {
      await transport.send(outbound.message, { mustNotRepeat: !this.#isRepeatable(outbound.message) });
      this.#unreachable = undefined;
      this.#reached = true;
      if (isRequest(outbound.message)) {
        const pending = this.#pending.get(requestKey(outbound.message.id));
        if (pending) pending.deliveredOn = transport;
      }
    } catch (error) {
      this.#onSendFailure(outbound, transport, error);
    }
  }

  #onSendFailure(outbound: Outbound, transport: RemoteTransport, error: unknown): void {
    if (this.#closing) return;
    if (error instanceof RemoteHttpError) this.#reached = true;
    if (transport !== this.#transport) {
      // It went out on a session the bridge has since replaced (closing it aborted this request, or the
      // server had forgotten it): the server never ran it, so it goes again on the current session.
      if (this.#recovering) this.#hold(outbound);
      else void this.#send(outbound);
      return;
    }
    const isInitialize = isRequest(outbound.message) && outbound.message.method === "initialize";
    if (isSessionGone(error) && transport.sessionId && !isInitialize) {
      this.#log.info("the server no longer knows this session; opening a new one");
      this.#needsNewSession = true;
      this.#hold(outbound);
      this.#startRecovery();
      return;
    }
    if (isInitialize && error instanceof RemoteHttpError && error.status === 404) {
      void this.#answerWrongEndpoint(outbound, error);
      return;
    }
    if (this.#answeredAsLastingFailure(outbound, error)) return;
    if (this.#answeredAsOutcomeUnknown(outbound, error)) return;
    if (isNetworkError(error)) {
      if (this.#unreachable !== undefined && !this.#recovering) {
        this.#answerWithError(outbound, this.#unreachableMessage(this.#describe(error)));
        return;
      }
      this.#hold(outbound);
      this.#startRecovery();
      return;
    }
    this.#answerWithError(outbound, `chat-mcp-bridge: ${this.#describe(error)}`);
  }

  /** An error as the user reads it: a proxy or certificate problem with what to do, else its short description. */
  #describe(error: unknown): string {
    return describeNetworkFailure(error, this.#options.url) ?? describeError(error);
  }

  /**
   * A failure that waiting will not cure (a refusing proxy, an untrusted certificate): the request is answered
   * at once with what to do, and the log says it once, not once per request.
   */
  #answeredAsLastingFailure(outbound: Outbound, error: unknown): boolean {
    if (!isLastingNetworkFailure(error)) return false;
    const message = this.#describe(error);
    if (!this.#loggedFailures.has(message)) {
      this.#loggedFailures.add(message);
      this.#log.info(message);
    }
    this.#answerWithError(outbound, `chat-mcp-bridge: ${message}`);
    return true;
  }

  /** `initialize` answered 404: the URL is not the MCP endpoint; say which one is, when a nearby URL answers as one. */
  async #answerWrongEndpoint(outbound: Outbound, error: RemoteHttpError): Promise<void> {
    this.#log.debug(`initialize: ${describeError(error)}`);
    const message = await wrongEndpointMessage(this.#options.url, "it answered initialize with HTTP 404");
    this.#log.info(message);
    this.#answerWithError(outbound, `chat-mcp-bridge: ${message}`);
  }

  #hold(outbound: Outbound): void {
    let index = this.#held.length;
    while (index > 0 && this.#held[index - 1]!.seq > outbound.seq) index--;
    this.#held.splice(index, 0, outbound);
  }

  #startRecovery(): void {
    if (this.#recovering || this.#closing) return;
    const recovery = this.#recover();
    this.#recovering = recovery;
    void recovery.finally(() => {
      if (this.#recovering === recovery) this.#recovering = undefined;
    });
  }

  /** Reopens the session and/or waits for the server, then sends the held messages in order. */
  async #recover(): Promise<void> {
    const firstContact = !this.#reached;
    const deadline = Date.now() + reconnectWindowMs(this.#reconnectWindowMs, firstContact);
    let delayMs = FIRST_RETRY_DELAY_MS;
    let lastError: unknown;
    while (!this.#closing) {
      try {
        if (this.#needsNewSession) {
          await this.#openNewSession();
          this.#needsNewSession = false;
        }
        // The first held message goes alone: it proves the server is back before the rest follow it.
        const first = this.#held.shift();
        if (first) {
          try {
            await this.#transport.send(first.message, { mustNotRepeat: !this.#isRepeatable(first.message) });
          } catch (error) {
            if (this.#answeredAsLastingFailure(first, error)) continue;
            if (this.#answeredAsOutcomeUnknown(first, error)) continue;
            if (!isSessionGone(error) && !isNetworkError(error)) {
              this.#answerWithError(first, `chat-mcp-bridge: ${this.#describe(error)}`);
              continue;
            }
            this.#hold(first);
            if (isSessionGone(error) && this.#transport.sessionId) this.#needsNewSession = true;
            throw error;
          }
          if (isRequest(first.message)) {
            const pending = this.#pending.get(requestKey(first.message.id));
            if (pending) pending.deliveredOn = this.#transport;
          }
        }
        this.#unreachable = undefined;
        this.#reached = true;
        const rest = this.#held;
        this.#held = [];
        this.#recovering = undefined;
        for (const outbound of rest) void this.#send(outbound);
        if (lastError !== undefined) this.#log.info("reconnected to the server");
        return;
      } catch (error) {
        lastError = error;
        if (!isNetworkError(error) && !isSessionGone(error)) break;
        if (Date.now() + delayMs > deadline) break;
        // A server never reached gets one line, when the bridge gives up, not two.
        if (delayMs === FIRST_RETRY_DELAY_MS && !firstContact)
          this.#log.info(`cannot reach ${this.#options.url.origin}: ${this.#describe(error)}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs = nextRetryDelay(delayMs);
      }
    }
    if (this.#closing) return;
    this.#giveUp(lastError);
  }

  /** The reconnect window ran out: answer what waits with an error and keep running for later requests. */
  #giveUp(error: unknown): void {
    const reason = this.#describe(error);
    const unreachable = isNetworkError(error) || isSessionGone(error);
    if (unreachable) this.#unreachable = reason;
    const message = unreachable ? this.#unreachableMessage(reason) : `chat-mcp-bridge: ${reason}`;
    this.#log.info(message.slice("chat-mcp-bridge: ".length));
    const held = this.#held;
    this.#held = [];
    for (const outbound of held) this.#answerWithError(outbound, message);
    for (const [key, pending] of this.#pending) {
      if (pending.deliveredOn) {
        this.#pending.delete(key);
        this.#options.toClient(errorResponse(pending.id, message));
      }
    }
  }

  #unreachableMessage(reason: string): string {
    const check = this.#reached
      ? ""
      : ` Is the server running, and is ${this.#options.url.href} the right URL?`;
    return `chat-mcp-bridge: cannot reach ${this.#options.url.origin}: ${reason}.${check} The bridge keeps running and retries on the next request.`;
  }

  /** Replaces the transport with a new session, replaying the client's `initialize` under a bridge id. */
  async #openNewSession(): Promise<void> {
    const old = this.#transport;
    old.onmessage = undefined;
    old.onerror = undefined;
    old.onrequestlost = undefined;
    void old.close().catch(() => undefined);
    this.#transport = this.#openTransport();
    await this.#transport.start();
    // Requests the old session accepted will never be answered there; the new session cannot answer them.
    for (const [key, pending] of this.#pending) {
      if (pending.deliveredOn === old) {
        this.#pending.delete(key);
        this.#options.toClient(
          errorResponse(
            pending.id,
            "chat-mcp-bridge: the server lost the session while this request was in flight",
          ),
        );
      }
    }
    const initialize = this.#initializeRequest;
    if (!initialize) return;
    // Held requests not yet sent are replayed by the flush; the held `initialize` itself needs no replay.
    if (this.#held.some((outbound) => outbound.message === initialize)) return;
    const id = `${BRIDGE_ID_PREFIX}initialize/${++this.#bridgeIds}`;
    let timer: NodeJS.Timeout | undefined;
    const answer = new Promise<JSONRPCMessage>((resolve, reject) => {
      this.#bridgeWaiters.set(id, resolve);
      timer = setTimeout(
        () => reject(new Error("the server did not answer initialize on the new session")),
        30_000,
      );
    });
    answer.catch(() => undefined);
    try {
      await this.#transport.send({ ...initialize, id });
      const response = await answer;
      if ("error" in response) throw new Error(`the server refused to initialize: ${response.error.message}`);
      const version =
        "result" in response ? (response.result as { protocolVersion?: unknown }).protocolVersion : undefined;
      if (typeof version === "string") this.#transport.setProtocolVersion(version);
      else if (this.#protocolVersion) this.#transport.setProtocolVersion(this.#protocolVersion);
    } finally {
      clearTimeout(timer);
      this.#bridgeWaiters.delete(id);
    }
    this.#held = this.#held.filter(
      (outbound) =>
        !("method" in outbound.message && outbound.message.method === "notifications/initialized"),
    );
    await this.#transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.#log.info("opened a new session with the server");
  }

  #answerWithError(outbound: Outbound, message: string): void {
    if (!isRequest(outbound.message)) {
      this.#log.info(`could not deliver ${describeMessage(outbound.message)}: ${message}`);
      return;
    }
    const key = requestKey(outbound.message.id);
    if (!this.#pending.delete(key)) return;
    this.#options.toClient(errorResponse(outbound.message.id, message));
  }
}

function errorResponse(id: RequestId, message: string): JSONRPCMessage {
  return { jsonrpc: "2.0", id, error: { code: BRIDGE_ERROR_CODE, message: redact(message) } };
}

/** Method and id only: message contents stay out of logs. */
export function describeMessage(message: JSONRPCMessage): string {
  if ("method" in message) {
    const tool = message.method === "tools/call" ? toolNameOf(message.params) : "";
    return "id" in message ? `${message.method}${tool} #${String(message.id)}` : `${message.method}${tool}`;
  }
  return "error" in message ? `error #${String(message.id)}` : `result #${String(message.id)}`;
}

/** ` "<name>"` of a tools/call (quoted, cut at 100 characters: it is the client's text), or "" without one. */
function toolNameOf(params: unknown): string {
  const name = (params as { name?: unknown } | undefined)?.name;
  return typeof name === "string" ? ` ${JSON.stringify(name.slice(0, 100))}` : "";
}
