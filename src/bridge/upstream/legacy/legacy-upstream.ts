/** The legacy (2025) upstream: JSON-RPC between the bridge's pipeline and a server's session, each request answered once. */

import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describeNetworkFailure, isLastingNetworkFailure } from "../../../internal/network-errors.js";
import { requestNeverSent } from "../../../internal/request-failure.js";
import { type BridgeLog, describeError, describeMessage } from "../../log/log.js";
import { cancelledRequestId, isRequest } from "../../messages/jsonrpc.js";
import { wrongEndpointMessage } from "../http/endpoint-check.js";
import { isNetworkError, outcomeUnknownMessage, RemoteHttpError } from "../http/http-exchange.js";
import {
  DEFAULT_RECONNECT_WINDOW_MS,
  FIRST_RETRY_DELAY_MS,
  nextRetryDelay,
  reconnectWindowMs,
} from "../http/time-outs.js";
import {
  type HeldMessages,
  isSessionGone,
  LegacySession,
  PendingRequests,
  ResendPolicy,
  type SessionOptions,
} from "./session.js";
import type { RemoteTransport } from "./streamable-http-transport.js";

export { BRIDGE_ERROR_CODE } from "./session.js";
export type { RemoteTransport } from "./streamable-http-transport.js";

export interface LegacyUpstreamOptions extends SessionOptions {
  /** How long to keep retrying an unreachable server before answering the held requests with an error. */
  reconnectWindowMs?: number | undefined;
}

interface Outbound {
  seq: number;
  message: JSONRPCMessage;
}

class HeldQueue implements HeldMessages {
  #queue: Outbound[] = [];

  add(outbound: Outbound): void {
    let index = this.#queue.length;
    while (index > 0 && this.#queue[index - 1]!.seq > outbound.seq) index--;
    this.#queue.splice(index, 0, outbound);
  }

  holds(message: JSONRPCMessage): boolean {
    return this.#queue.some((outbound) => outbound.message === message);
  }

  /** Drops the held messages `drop` picks (a replay made them redundant). */
  drop(drop: (message: JSONRPCMessage) => boolean): void {
    this.#queue = this.#queue.filter((outbound) => !drop(outbound.message));
  }

  shift(): Outbound | undefined {
    return this.#queue.shift();
  }

  takeAll(): Outbound[] {
    const all = this.#queue;
    this.#queue = [];
    return all;
  }
}

/** Client messages go out in arrival order, held in order while recovering; each request is answered exactly once. */
export class LegacyUpstream {
  readonly #url: URL;
  readonly #log: BridgeLog;
  readonly #reconnectWindowMs: number;
  readonly #pending: PendingRequests;
  readonly #resendPolicy = new ResendPolicy();
  readonly #session: LegacySession;
  /** Lasting failures already logged (see `#answeredAsLastingFailure`). */
  readonly #loggedFailures = new Set<string>();
  readonly #held = new HeldQueue();
  #seq = 0;
  /** Transports whose session was already checked after a 404 on the event stream. */
  readonly #probed = new WeakSet<RemoteTransport>();
  #recovering: Promise<void> | undefined;
  #needsNewSession = false;
  /** Set after a reconnect window ran out; later failures are answered at once instead of waiting again. */
  #unreachable: string | undefined;
  /** Set once the server answered anything over HTTP. */
  #reached = false;

  constructor(options: LegacyUpstreamOptions) {
    const { url, log } = options;
    this.#url = url;
    this.#log = log;
    this.#reconnectWindowMs = options.reconnectWindowMs ?? DEFAULT_RECONNECT_WINDOW_MS;
    this.#pending = new PendingRequests((message) => options.toClient(message));
    this.#session = new LegacySession({
      ...options,
      pending: this.#pending,
      resendPolicy: this.#resendPolicy,
      onTransportError: (transport, error) => this.#onTransportError(transport, error),
    });
  }

  async start(): Promise<void> {
    await this.#session.start();
  }

  /** A message from the local client (already through the bridge's face and policy). */
  fromClient(message: JSONRPCMessage): void {
    if (this.#session.closing) return;
    if (isRequest(message)) {
      if (message.method === "initialize") this.#session.rememberInitialize(message);
      this.#pending.add(message.id, message.method);
    }
    const cancelled =
      "method" in message && message.method === "notifications/cancelled" && !("id" in message)
        ? cancelledRequestId(message.params)
        : undefined;
    if (
      cancelled !== undefined &&
      this.#pending.holdCancellation(cancelled, () => this.#sendOrHold({ seq: ++this.#seq, message }))
    ) {
      this.#log.debug(
        `the cancellation of request ${String(cancelled)} waits until the server has the request`,
      );
      return;
    }
    this.#sendOrHold({ seq: ++this.#seq, message });
  }

  async close(timeoutMs = 1000): Promise<void> {
    await this.#session.close(timeoutMs);
  }

  #onTransportError(transport: RemoteTransport, error: Error): void {
    this.#log.debug(`remote transport: ${this.#describe(error)}`);
    // The event stream came back 404: a forgotten session, or no stream offered? A ping tells; a lost one is reopened.
    if (
      transport === this.#session.transport &&
      isSessionGone(error) &&
      transport.sessionId &&
      !this.#probed.has(transport)
    ) {
      this.#probed.add(transport);
      void this.#probeSession(transport);
    }
  }

  async #probeSession(transport: RemoteTransport): Promise<void> {
    if (this.#recovering || !this.#session.initialized) return;
    try {
      await this.#session.ping(transport);
    } catch (error) {
      if (transport === this.#session.transport && isSessionGone(error)) {
        this.#log.info("the server no longer knows this session; opening a new one");
        this.#startRecovery(true);
      }
    }
  }

  #sendOrHold(outbound: Outbound): void {
    if (this.#recovering) this.#held.add(outbound);
    else void this.#send(outbound);
  }

  /** Starts recovering (a new session first when `newSession`), unless already under way. */
  #startRecovery(newSession = false): void {
    if (newSession) this.#needsNewSession = true;
    if (this.#recovering || this.#session.closing) return;
    const recovery = this.#recover();
    this.#recovering = recovery;
    void recovery.finally(() => {
      if (this.#recovering === recovery) this.#recovering = undefined;
    });
  }

  async #send(outbound: Outbound): Promise<void> {
    const transport = this.#session.transport;
    try {
      await this.#sendNow(outbound);
    } catch (error) {
      this.#onSendFailure(outbound, transport, error);
    }
  }

  async #sendNow(outbound: Outbound): Promise<void> {
    await this.#session.send(outbound.message);
    this.#reachedServer();
  }

  #reachedServer(): void {
    this.#unreachable = undefined;
    this.#reached = true;
  }

  #onSendFailure(outbound: Outbound, transport: RemoteTransport, error: unknown): void {
    if (this.#session.closing) return;
    if (error instanceof RemoteHttpError) this.#reached = true;
    if (transport !== this.#session.transport) {
      // It went out on a session since replaced: the server never ran it, so it goes again on the current one.
      this.#sendOrHold(outbound);
      return;
    }
    const { message } = outbound;
    const isInitialize = isRequest(message) && message.method === "initialize";
    if (isSessionGone(error) && transport.sessionId && !isInitialize) {
      this.#log.info("the server no longer knows this session; opening a new one");
      this.#held.add(outbound);
      this.#startRecovery(true);
      return;
    }
    if (isInitialize && error instanceof RemoteHttpError && error.status === 404) {
      void this.#answerWrongEndpoint(message, error);
      return;
    }
    if (this.#answeredAsLastingFailure(message, error)) return;
    if (this.#answeredAsOutcomeUnknown(message, error)) return;
    if (isNetworkError(error)) {
      if (this.#unreachable !== undefined && !this.#recovering) {
        this.#answerWithError(message, this.#unreachableMessage(this.#describe(error)));
        return;
      }
      this.#held.add(outbound);
      this.#startRecovery();
      return;
    }
    this.#answerWithError(message, `chat-mcp-bridge: ${this.#describe(error)}`);
  }

  /**
   * The error of a request that cannot reach the server. Never reached, it is the `initialize` error: a client never
   * asks a server whose start failed again, so the text says to restart it there.
   */
  #unreachableMessage(reason: string): string {
    const url = this.#url;
    const next = this.#reached
      ? "The bridge keeps running and retries on the next request."
      : `Is the server running, and is ${url.href} the right URL? Your MCP client will not retry: once the server is up, restart or reconnect this server in the client.`;
    return `chat-mcp-bridge: cannot reach ${url.origin}: ${reason}. ${next}`;
  }

  /** Reopens the session and/or waits for the server, then sends the held messages in order. */
  async #recover(): Promise<void> {
    const log = this.#log;
    const url = this.#url;
    const session = this.#session;
    const firstContact = !this.#reached;
    const deadline = Date.now() + reconnectWindowMs(this.#reconnectWindowMs, firstContact);
    let delayMs = FIRST_RETRY_DELAY_MS;
    let lastError: unknown;
    while (!session.closing) {
      try {
        if (this.#needsNewSession) {
          await session.reopen(this.#held);
          this.#needsNewSession = false;
        }
        // The first held message goes alone: it proves the server is back before the rest follow it.
        const first = this.#held.shift();
        if (first) {
          try {
            await this.#sendNow(first);
          } catch (error) {
            if (this.#answeredAsIncurable(first.message, error)) continue;
            this.#held.add(first);
            if (isSessionGone(error) && session.transport.sessionId) this.#needsNewSession = true;
            throw error;
          }
        }
        this.#reachedServer();
        const rest = this.#held.takeAll();
        this.#recovering = undefined;
        for (const outbound of rest) this.#sendOrHold(outbound);
        if (lastError !== undefined) log.info("reconnected to the server");
        return;
      } catch (error) {
        lastError = error;
        if (!isNetworkError(error) && !isSessionGone(error)) break;
        if (Date.now() + delayMs > deadline) break;
        // A server never reached gets one line, when the bridge gives up, not two.
        if (delayMs === FIRST_RETRY_DELAY_MS && !firstContact)
          log.info(`cannot reach ${url.origin}: ${this.#describe(error)}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs = nextRetryDelay(delayMs);
      }
    }
    if (session.closing) return;
    this.#giveUp(lastError);
  }

  /** The reconnect window ran out: answer what waits with an error and keep running for later requests. */
  #giveUp(error: unknown): void {
    const reason = this.#describe(error);
    const unreachable = isNetworkError(error) || isSessionGone(error);
    if (unreachable) this.#unreachable = reason;
    const message = unreachable ? this.#unreachableMessage(reason) : `chat-mcp-bridge: ${reason}`;
    this.#log.info(message.slice("chat-mcp-bridge: ".length));
    for (const outbound of this.#held.takeAll()) this.#answerWithError(outbound.message, message);
    this.#pending.failDelivered(message);
  }

  /** An error as the user reads it: a proxy or certificate problem with what to do, else its short description. */
  #describe(error: unknown): string {
    return describeNetworkFailure(error, this.#url) ?? describeError(error);
  }

  /** Answers a request with a bridge error (a notification cannot be answered: the log says it was lost). */
  #answerWithError(message: JSONRPCMessage, text: string): void {
    if (!isRequest(message)) {
      this.#log.info(`could not deliver ${describeMessage(message)}: ${text}`);
      return;
    }
    this.#pending.answerWithError(message.id, text);
  }

  /** A failure that waiting will not cure is answered at once (true when it was); else it is worth a retry. */
  #answeredAsIncurable(message: JSONRPCMessage, error: unknown): boolean {
    if (this.#answeredAsLastingFailure(message, error)) return true;
    if (this.#answeredAsOutcomeUnknown(message, error)) return true;
    if (isSessionGone(error) || isNetworkError(error)) return false;
    this.#answerWithError(message, `chat-mcp-bridge: ${this.#describe(error)}`);
    return true;
  }

  /** A failure waiting will not cure (a refusing proxy, a bad certificate): answered at once, logged once. */
  #answeredAsLastingFailure(message: JSONRPCMessage, error: unknown): boolean {
    if (!isLastingNetworkFailure(error)) return false;
    const text = this.#describe(error);
    if (!this.#loggedFailures.has(text)) {
      this.#loggedFailures.add(text);
      this.#log.info(text);
    }
    this.#answerWithError(message, `chat-mcp-bridge: ${text}`);
    return true;
  }

  /** The connection broke after a request that must not run twice was written: answered "may have run", not resent. */
  #answeredAsOutcomeUnknown(message: JSONRPCMessage, error: unknown): boolean {
    if (!isNetworkError(error) || requestNeverSent(error) || this.#resendPolicy.isRepeatable(message))
      return false;
    const text = outcomeUnknownMessage(this.#url.origin, this.#describe(error));
    this.#answerWithError(message, `chat-mcp-bridge: ${text}`);
    return true;
  }

  /** `initialize` answered 404: the URL is not the MCP endpoint; say which one is, when a nearby URL answers as one. */
  async #answerWrongEndpoint(message: JSONRPCMessage, error: RemoteHttpError): Promise<void> {
    this.#log.debug(`initialize: ${describeError(error)}`);
    const text = await wrongEndpointMessage(this.#url, "it answered initialize with HTTP 404");
    this.#log.info(text);
    this.#answerWithError(message, `chat-mcp-bridge: ${text}`);
  }
}
