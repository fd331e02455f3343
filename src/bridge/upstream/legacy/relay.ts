/** The legacy (2025) upstream: JSON-RPC between the bridge's pipeline and a server's session, each request answered once. */

// Recovery (recovery.ts) holds messages while the session is reopened; the transport is streamable-http-transport.ts.
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from "@modelcontextprotocol/client";
import { describeNetworkFailure, isLastingNetworkFailure } from "../../../internal/network-errors.js";
import { requestNeverSent } from "../../../internal/request-failure.js";
import { wrongEndpointMessage } from "../../endpoint-check.js";
import { isRequest, isResponse } from "../../jsonrpc.js";
import { type BridgeLog, describeError, describeMessage } from "../../log.js";
import type { HttpExchange } from "../http/http-exchange.js";
import { isNetworkError, RemoteHttpError } from "../http/http-failure.js";
import { outcomeUnknownMessage } from "../outcome-unknown.js";
import { DEFAULT_RECONNECT_WINDOW_MS } from "../reconnect-window.js";
import { BridgeRequests } from "./bridge-requests.js";
import { PendingRequests } from "./pending-requests.js";
import { isSessionGone, type Outbound, Recovery } from "./recovery.js";
import { ResendPolicy } from "./resend-policy.js";
import { type RemoteTransport, StreamableHttpTransport } from "./streamable-http-transport.js";

export { BRIDGE_ERROR_CODE } from "./pending-requests.js";
export type { RemoteTransport } from "./streamable-http-transport.js";

export interface LegacySessionRelayOptions {
  url: URL;
  exchange: HttpExchange;
  log: BridgeLog;
  /**
   * Hands one message up the pipeline toward the client. `raw`: the server's JSON text of a message relayed
   * unchanged, to write as is (see LineWriter). `relatedRequestId`: the request whose response stream carried a
   * server request or notification.
   */
  toClient(message: JSONRPCMessage, raw?: string, relatedRequestId?: RequestId): void;
  /** How long to keep retrying an unreachable server before answering the held requests with an error. */
  reconnectWindowMs?: number;
  /** Builds the remote transport (tests inject fakes); defaults to the streamable-HTTP client. */
  createTransport?: (url: URL, exchange: HttpExchange) => RemoteTransport;
}

/**
 * Relays messages both ways. Client messages go out in the order they arrive; while the bridge recovers the
 * session or waits for the server to come back they are held, in order, and sent after. Each client request
 * is answered exactly once: by the server, or by the bridge when the server cannot answer it.
 */
export class LegacySessionRelay {
  readonly #options: LegacySessionRelayOptions;
  readonly #log: BridgeLog;
  /** Lasting failures already logged (see `#answeredAsLastingFailure`). */
  readonly #loggedFailures = new Set<string>();
  #transport: RemoteTransport;
  #seq = 0;
  #closing = false;
  /** Transports whose session was already checked after a 404 on the event stream. */
  readonly #probed = new WeakSet<RemoteTransport>();
  readonly #pending: PendingRequests;
  readonly #recovery: Recovery;
  readonly #resendPolicy = new ResendPolicy();
  readonly #bridgeRequests = new BridgeRequests();
  #initializeRequest: JSONRPCRequest | undefined;
  #protocolVersion: string | undefined;

  constructor(options: LegacySessionRelayOptions) {
    this.#options = options;
    this.#log = options.log;
    this.#pending = new PendingRequests((message) => options.toClient(message));
    this.#recovery = new Recovery({
      url: options.url,
      log: options.log,
      reconnectWindowMs: options.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS,
      isClosing: () => this.#closing,
      sessionId: () => this.#transport.sessionId,
      openNewSession: () => this.#openNewSession(),
      sendNow: (outbound) => this.#sendNow(outbound),
      send: (outbound) => void this.#send(outbound),
      answeredAsIncurable: (outbound, error) => this.#answeredAsIncurable(outbound, error),
      failDelivered: (message) => this.#pending.failDelivered(message),
      answerWithError: (outbound, message) => this.#answerWithError(outbound, message),
      describe: (error) => this.#describe(error),
    });
    this.#transport = this.#openTransport();
  }

  async start(): Promise<void> {
    await this.#transport.start();
  }

  /** A message from the local client (already through the bridge's face and policy). */
  fromClient(message: JSONRPCMessage): void {
    if (this.#closing) return;
    if (isRequest(message)) {
      if (message.method === "initialize") this.#initializeRequest = message;
      this.#pending.add(message.id, message.method);
    }
    const outbound = { seq: ++this.#seq, message };
    if (this.#recovery.active) this.#recovery.hold(outbound);
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
    await transport.close().catch(() => undefined);
  }

  #openTransport(): RemoteTransport {
    const transport = this.#options.createTransport
      ? this.#options.createTransport(this.#options.url, this.#options.exchange)
      : new StreamableHttpTransport(this.#options.url, this.#options.exchange);
    transport.onmessage = (message, raw, relatedRequestId) =>
      this.#fromServer(transport, message, raw, relatedRequestId);
    transport.onerror = (error) => this.#onTransportError(transport, error);
    transport.onrequestlost = (id, reason) => {
      if (this.#closing || transport !== this.#transport) return;
      this.#pending.answerWithError(id, `chat-mcp-bridge: ${reason}`);
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
      if (this.#bridgeRequests.tookAnswer(message)) return;
      const pending = this.#pending.take(message.id);
      if (!pending) {
        this.#log.debug(`dropped a second answer to request ${String(message.id)}`);
        return;
      }
      if (pending.method === "tools/list" && "result" in message)
        this.#resendPolicy.learnTools(message.result);
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

  /** Whether sending this message a second time is harmless (see ResendPolicy). */
  #isRepeatable(message: JSONRPCMessage): boolean {
    return this.#resendPolicy.isRepeatable(message);
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
    if (this.#recovery.active || !this.#initializeRequest) return;
    try {
      await this.#bridgeRequests.ping(transport);
    } catch (error) {
      if (transport === this.#transport && isSessionGone(error)) {
        this.#log.info("the server no longer knows this session; opening a new one");
        this.#recovery.start(true);
      }
    }
  }

  async #send(outbound: Outbound): Promise<void> {
    const transport = this.#transport;
    try {
      await this.#sendNow(outbound);
    } catch (error) {
      this.#onSendFailure(outbound, transport, error);
    }
  }

  /** Sends on the current transport; once the server accepted it, a request's answer can only come from there. */
  async #sendNow(outbound: Outbound): Promise<void> {
    const transport = this.#transport;
    await transport.send(outbound.message, { mustNotRepeat: !this.#isRepeatable(outbound.message) });
    this.#recovery.reachedServer();
    if (isRequest(outbound.message)) this.#pending.deliveredOn(outbound.message.id, transport);
  }

  #onSendFailure(outbound: Outbound, transport: RemoteTransport, error: unknown): void {
    if (this.#closing) return;
    if (error instanceof RemoteHttpError) this.#recovery.answeredOverHttp();
    if (transport !== this.#transport) {
      // It went out on a session the bridge has since replaced (closing it aborted this request, or the
      // server had forgotten it): the server never ran it, so it goes again on the current session.
      if (this.#recovery.active) this.#recovery.hold(outbound);
      else void this.#send(outbound);
      return;
    }
    const isInitialize = isRequest(outbound.message) && outbound.message.method === "initialize";
    if (isSessionGone(error) && transport.sessionId && !isInitialize) {
      this.#log.info("the server no longer knows this session; opening a new one");
      this.#recovery.hold(outbound);
      this.#recovery.start(true);
      return;
    }
    if (isInitialize && error instanceof RemoteHttpError && error.status === 404) {
      void this.#answerWrongEndpoint(outbound, error);
      return;
    }
    if (this.#answeredAsLastingFailure(outbound, error)) return;
    if (this.#answeredAsOutcomeUnknown(outbound, error)) return;
    if (isNetworkError(error)) {
      if (this.#recovery.unreachable !== undefined && !this.#recovery.active) {
        this.#answerWithError(outbound, this.#recovery.unreachableMessage(this.#describe(error)));
        return;
      }
      this.#recovery.hold(outbound);
      this.#recovery.start();
      return;
    }
    this.#answerWithError(outbound, `chat-mcp-bridge: ${this.#describe(error)}`);
  }

  /** A failure of recovery's first message that waiting will not cure is answered at once (true when it was). */
  #answeredAsIncurable(outbound: Outbound, error: unknown): boolean {
    if (this.#answeredAsLastingFailure(outbound, error)) return true;
    if (this.#answeredAsOutcomeUnknown(outbound, error)) return true;
    if (isSessionGone(error) || isNetworkError(error)) return false;
    this.#answerWithError(outbound, `chat-mcp-bridge: ${this.#describe(error)}`);
    return true;
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
    this.#pending.failDelivered(
      "chat-mcp-bridge: the server lost the session while this request was in flight",
      old,
    );
    const initialize = this.#initializeRequest;
    if (!initialize) return;
    // Held requests not yet sent are replayed by the flush; the held `initialize` itself needs no replay.
    if (this.#recovery.holds(initialize)) return;
    const version =
      (await this.#bridgeRequests.replayInitialize(this.#transport, initialize)) ?? this.#protocolVersion;
    if (version) this.#transport.setProtocolVersion(version);
    this.#recovery.dropHeld(
      (message) => "method" in message && message.method === "notifications/initialized",
    );
    await this.#transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.#log.info("opened a new session with the server");
  }

  #answerWithError(outbound: Outbound, message: string): void {
    if (!isRequest(outbound.message)) {
      this.#log.info(`could not deliver ${describeMessage(outbound.message)}: ${message}`);
      return;
    }
    this.#pending.answerWithError(outbound.message.id, message);
  }
}
