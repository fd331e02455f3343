/** One 2025 session with the server: its transport, the client's requests owed an answer on it (each answered exactly once, and which may go twice), the bridge's own requests on it (a ping, the `initialize` replayed), and a new one when the server forgets it. */
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from "@modelcontextprotocol/client";
import { redact } from "../../../internal/redact.js";
import { type BridgeLog, describeError } from "../../log/log.js";
import { BridgeRequestIds, isRequest, isResponse, requestKey } from "../../messages/jsonrpc.js";
import { type HttpExchange, RemoteHttpError } from "../http/http-exchange.js";
import { type RemoteTransport, StreamableHttpTransport } from "./streamable-http-transport.js";

/** The server forgot the session (it restarted, or expired it): open a new one. */
export function isSessionGone(error: unknown): boolean {
  return error instanceof RemoteHttpError && error.status === 404;
}

/** The client messages waiting to go out on the new session, which a reopening must not send twice. */
export interface HeldMessages {
  holds(message: JSONRPCMessage): boolean;
  drop(drop: (message: JSONRPCMessage) => boolean): void;
}

/** The session as the legacy upstream's options shape it. */
export interface SessionOptions {
  url: URL;
  exchange: HttpExchange;
  log: BridgeLog;
  /** A server message toward the client: `raw` its JSON text to write as is, `relatedRequestId` its stream's request. */
  toClient(message: JSONRPCMessage, raw?: string, relatedRequestId?: RequestId): void;
  /** Builds the remote transport (tests inject fakes); defaults to the streamable-HTTP client. */
  createTransport?: ((url: URL, exchange: HttpExchange) => RemoteTransport) | undefined;
  /** `--max-message-size` in bytes, for the default transport. */
  maxMessageBytes?: number | undefined;
  /** `--ping-interval`: a `ping` once idle this long, so proxies keep the session; a failure is a transport error. */
  pingIntervalMs?: number | undefined;
}

interface LegacySessionOptions extends SessionOptions {
  /** The client's requests still owed an answer: answers taken out, accepted ones marked with their transport. */
  pending: PendingRequests;
  /** Learns the tools' hints from the lists that pass, and says which requests must not be sent twice. */
  resendPolicy: ResendPolicy;
  /** The transport failed outside a send (its event stream); not called once closing. */
  onTransportError(transport: RemoteTransport, error: Error): void;
}

/** How long a new session has to answer the replayed `initialize`. */
const REPLAY_TIMEOUT_MS = 30_000;

export class LegacySession {
  readonly #options: LegacySessionOptions;
  readonly #ids = new BridgeRequestIds("session");
  /** The bridge's own requests waiting for their answers, kept from the client. */
  readonly #waiters = new Map<string, (message: JSONRPCMessage) => void>();
  #pingTimer: NodeJS.Timeout | undefined;
  #transport: RemoteTransport;
  #closing = false;
  #initializeRequest: JSONRPCRequest | undefined;
  #protocolVersion: string | undefined;

  constructor(options: LegacySessionOptions) {
    this.#options = options;
    this.#transport = this.#openTransport();
  }

  get transport(): RemoteTransport {
    return this.#transport;
  }

  get closing(): boolean {
    return this.#closing;
  }

  /** True once the client sent `initialize` (a new session needs it replayed). */
  get initialized(): boolean {
    return this.#initializeRequest !== undefined;
  }

  async start(): Promise<void> {
    await this.#transport.start();
    this.#armPing();
  }

  /** The client's `initialize`: its answer sets the protocol version, and a new session replays it. */
  rememberInitialize(request: JSONRPCRequest): void {
    this.#initializeRequest = request;
  }

  /** Sends on the current transport; once the server accepted it, a request's answer can only come from there. */
  async send(message: JSONRPCMessage): Promise<void> {
    this.#exchanged();
    const transport = this.#transport;
    await transport.send(message, { mustNotRepeat: !this.#options.resendPolicy.isRepeatable(message) });
    if (isRequest(message)) this.#options.pending.deliveredOn(message.id, transport);
  }

  /** Pings the session on `transport`; rejects as the transport does (a 404 says the server forgot it). */
  async ping(transport: RemoteTransport): Promise<void> {
    const id = this.#ids.next();
    this.#waiters.set(id, () => this.#waiters.delete(id));
    try {
      await transport.send({ jsonrpc: "2.0", id, method: "ping" });
    } catch (error) {
      this.#waiters.delete(id);
      throw error;
    }
  }

  /** Replaces the transport with a new session, replaying the client's `initialize` under a bridge id. */
  async reopen(held: HeldMessages): Promise<void> {
    const old = this.#transport;
    old.onmessage = undefined;
    old.onerror = undefined;
    old.onrequestlost = undefined;
    void old.close().catch(() => undefined);
    this.#transport = this.#openTransport();
    await this.#transport.start();
    this.#armPing();
    // Requests the old session accepted will never be answered there; the new session cannot answer them.
    this.#options.pending.failDelivered(
      "chat-mcp-bridge: the server lost the session while this request was in flight",
      old,
    );
    const initialize = this.#initializeRequest;
    if (!initialize) return;
    // Held requests not yet sent go out after this; the held `initialize` itself needs no replay.
    if (held.holds(initialize)) return;
    const version = (await this.#replayInitialize(initialize)) ?? this.#protocolVersion;
    if (version) this.#transport.setProtocolVersion(version);
    held.drop((message) => "method" in message && message.method === "notifications/initialized");
    await this.#transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.#options.log.info("opened a new session with the server");
  }

  async close(timeoutMs: number): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    clearTimeout(this.#pingTimer);
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
    await transport.close().catch(() => undefined);
  }

  /** Replays the client's `initialize` on the new session; resolves with the protocol version the server chose. */
  async #replayInitialize(initialize: JSONRPCRequest): Promise<string | undefined> {
    const id = this.#ids.next();
    let timer: NodeJS.Timeout | undefined;
    const answer = new Promise<JSONRPCMessage>((resolve, reject) => {
      this.#waiters.set(id, resolve);
      timer = setTimeout(
        () => reject(new Error("the server did not answer initialize on the new session")),
        REPLAY_TIMEOUT_MS,
      );
    });
    answer.catch(() => undefined);
    try {
      await this.#transport.send({ ...initialize, id });
      const response = await answer;
      if ("error" in response) throw new Error(`the server refused to initialize: ${response.error.message}`);
      const version =
        "result" in response ? (response.result as { protocolVersion?: unknown }).protocolVersion : undefined;
      return typeof version === "string" ? version : undefined;
    } finally {
      clearTimeout(timer);
      this.#waiters.delete(id);
    }
  }

  /** A message went either way: the idle time before the next keep-alive ping starts again. */
  #exchanged(): void {
    if (this.#pingTimer) this.#armPing();
  }

  #armPing(): void {
    const intervalMs = this.#options.pingIntervalMs;
    clearTimeout(this.#pingTimer);
    if (!intervalMs || this.#closing) return;
    this.#pingTimer = setTimeout(() => void this.#keepAlive(), intervalMs);
    // A ping is never a reason for the process to stay up.
    this.#pingTimer.unref();
  }

  async #keepAlive(): Promise<void> {
    const transport = this.#transport;
    // No session yet (before `initialize`): nothing to keep alive.
    if (transport.sessionId) {
      try {
        await this.ping(transport);
        this.#options.log.debug("keep-alive ping sent");
      } catch (error) {
        if (this.#closing) return;
        this.#options.log.info(`keep-alive ping to the server failed: ${describeError(error)}`);
        transport.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    }
    this.#armPing();
  }

  #openTransport(): RemoteTransport {
    const { url, exchange, createTransport, maxMessageBytes } = this.#options;
    const transport = createTransport
      ? createTransport(url, exchange)
      : new StreamableHttpTransport(url, exchange, maxMessageBytes ? { maxMessageBytes } : {});
    transport.onmessage = (message, raw, relatedRequestId) =>
      this.#fromServer(transport, message, raw, relatedRequestId);
    transport.onerror = (error) => {
      if (!this.#closing) this.#options.onTransportError(transport, error);
    };
    transport.onrequestlost = (id, reason) => {
      if (this.#closing || transport !== this.#transport) return;
      this.#options.pending.answerWithError(id, `chat-mcp-bridge: ${reason}`);
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
    this.#exchanged();
    if (isResponse(message)) {
      if (this.#ids.owns(message.id)) {
        this.#waiters.get(message.id)?.(message);
        return;
      }
      const pending = this.#options.pending.take(message.id);
      if (!pending) {
        this.#options.log.debug(`dropped a second answer to request ${String(message.id)}`);
        return;
      }
      if (pending.method === "tools/list" && "result" in message)
        this.#options.resendPolicy.learnTools(message.result);
      if (this.#initializeRequest?.id === message.id && "result" in message) {
        const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
        if (typeof version === "string") {
          this.#protocolVersion = version;
          transport.setProtocolVersion(version);
        }
      }
    }
    this.#options.toClient(message, raw, relatedRequestId);
  }
}

/** JSON-RPC error code for failures of the bridge itself (server unreachable, session lost, auth failed). */
export const BRIDGE_ERROR_CODE = -32000;

/** A bridge error answer to the request `id`; the message is redacted. */
export function errorResponse(id: RequestId, message: string): JSONRPCMessage {
  return { jsonrpc: "2.0", id, error: { code: BRIDGE_ERROR_CODE, message: redact(message) } };
}

interface PendingRequest {
  id: RequestId;
  method: string;
  /** The transport whose POST carried it, once the server accepted it; its answer can only come from there. */
  deliveredOn?: object;
  /** The client's cancellations of it, waiting until the server has it (see `holdCancellation`). */
  cancellations?: Array<() => void>;
}

/** Requests by id (a number 1 and a string "1" apart), each taken out when it is answered. */
export class PendingRequests {
  readonly #pending = new Map<string, PendingRequest>();
  readonly #toClient: (message: JSONRPCMessage) => void;

  constructor(toClient: (message: JSONRPCMessage) => void) {
    this.#toClient = toClient;
  }

  add(id: RequestId, method: string): void {
    this.#pending.set(requestKey(id), { id, method });
  }

  /** Takes the request out (its answer arrived); undefined when it was answered already. */
  take(id: RequestId): { method: string } | undefined {
    const pending = this.#pending.get(requestKey(id));
    this.#pending.delete(requestKey(id));
    return pending;
  }

  /** The server accepted the request on `transport`: cancellations waiting for that go out now. */
  deliveredOn(id: RequestId, transport: object): void {
    const pending = this.#pending.get(requestKey(id));
    if (!pending) return;
    pending.deliveredOn = transport;
    release(pending);
  }

  /**
   * Holds the cancellation of a request the server has not accepted yet (true), calling `send` once it has or was
   * answered. Sent at once it could overtake its request (a request may wait for a pooled connection): the server
   * would drop it and run the call. False when the request is unknown, answered or accepted already.
   */
  holdCancellation(id: RequestId, send: () => void): boolean {
    const pending = this.#pending.get(requestKey(id));
    if (!pending || pending.deliveredOn) return false;
    pending.cancellations ??= [];
    pending.cancellations.push(send);
    return true;
  }

  answerWithError(id: RequestId, message: string): boolean {
    const key = requestKey(id);
    const pending = this.#pending.get(key);
    if (!pending) return false;
    this.#pending.delete(key);
    this.#toClient(errorResponse(id, message));
    release(pending);
    return true;
  }

  /** Answers with `message` every request the server accepted (on `transport`, or on any when not given). */
  failDelivered(message: string, transport?: object): void {
    for (const [key, pending] of this.#pending) {
      if (pending.deliveredOn && (transport === undefined || pending.deliveredOn === transport)) {
        this.#pending.delete(key);
        this.#toClient(errorResponse(pending.id, message));
      }
    }
  }
}

function release(pending: PendingRequest): void {
  const waiting = pending.cancellations;
  pending.cancellations = undefined;
  for (const send of waiting ?? []) send();
}

/**
 * Tools the server calls safe to repeat (`readOnlyHint`, `idempotentHint`, from the lists that pass). Any other call
 * goes again only if it never reached the server: a write run twice is worse than an unknown outcome.
 */
export class ResendPolicy {
  readonly #repeatableTools = new Map<string, boolean>();

  learnTools(result: unknown): void {
    const tools = (result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as Array<{ name?: unknown; annotations?: Record<string, unknown> }>) {
      if (typeof tool?.name !== "string") continue;
      const hints = tool.annotations;
      this.#repeatableTools.set(tool.name, hints?.readOnlyHint === true || hints?.idempotentHint === true);
    }
  }

  isRepeatable(message: JSONRPCMessage): boolean {
    if (!isRequest(message) || message.method !== "tools/call") return true;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    return typeof name === "string" && this.#repeatableTools.get(name) === true;
  }
}
