/** The legacy upstream's recovery: messages held in order while the session is reopened or the server is away. */

// The first held message goes alone to prove the server is back, the rest follow; after the reconnect window,
// what waits is answered with an error and later failures are answered at once.
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import type { BridgeLog } from "../../log.js";
import { isNetworkError, RemoteHttpError } from "../http/http-failure.js";
import { FIRST_RETRY_DELAY_MS, nextRetryDelay, reconnectWindowMs } from "../reconnect-window.js";

/** A client message on its way out, numbered in arrival order. */
export interface Outbound {
  seq: number;
  message: JSONRPCMessage;
}

/** What recovery needs from the relay it serves. */
export interface RecoveryHost {
  readonly url: URL;
  readonly log: BridgeLog;
  /** How long to keep retrying an unreachable server before answering the held requests with an error. */
  readonly reconnectWindowMs: number;
  isClosing(): boolean;
  /** The current session's id, if the server gave one. */
  sessionId(): string | undefined;
  /** Replaces the session with a new one (the client's `initialize` replayed). */
  openNewSession(): Promise<void>;
  /** Sends a message on the current session and waits for the server to accept it; throws what the transport throws. */
  sendNow(outbound: Outbound): Promise<void>;
  /** Sends a message the ordinary way (its failures handled by the relay). */
  send(outbound: Outbound): void;
  /** Answers a message whose failure waiting will not cure; true when it did (else the failure is worth a retry). */
  answeredAsIncurable(outbound: Outbound, error: unknown): boolean;
  /** Answers every request the server accepted (and can no longer answer) with `message`. */
  failDelivered(message: string): void;
  answerWithError(outbound: Outbound, message: string): void;
  describe(error: unknown): string;
}

/** The server forgot the session (it restarted, or expired it): open a new one. */
export function isSessionGone(error: unknown): boolean {
  return error instanceof RemoteHttpError && error.status === 404;
}

export class Recovery {
  readonly #host: RecoveryHost;
  #held: Outbound[] = [];
  #recovering: Promise<void> | undefined;
  #needsNewSession = false;
  /** Set after a reconnect window ran out; later failures are answered at once instead of waiting again. */
  #unreachable: string | undefined;
  /** Set once the server answered anything over HTTP. */
  #reached = false;

  constructor(host: RecoveryHost) {
    this.#host = host;
  }

  /** True while recovering: new messages are held. */
  get active(): boolean {
    return this.#recovering !== undefined;
  }

  /** Set once a reconnect window ran out, until the server answers again. */
  get unreachable(): string | undefined {
    return this.#unreachable;
  }

  /** The server accepted a message. */
  reachedServer(): void {
    this.#unreachable = undefined;
    this.#reached = true;
  }

  /** The server answered over HTTP (even with an error status). */
  answeredOverHttp(): void {
    this.#reached = true;
  }

  /** Holds a message, in arrival order, until recovery sends it. */
  hold(outbound: Outbound): void {
    let index = this.#held.length;
    while (index > 0 && this.#held[index - 1]!.seq > outbound.seq) index--;
    this.#held.splice(index, 0, outbound);
  }

  /** True when `message` is held. */
  holds(message: JSONRPCMessage): boolean {
    return this.#held.some((outbound) => outbound.message === message);
  }

  /** Drops the held messages `drop` picks (a replay made them redundant). */
  dropHeld(drop: (message: JSONRPCMessage) => boolean): void {
    this.#held = this.#held.filter((outbound) => !drop(outbound.message));
  }

  /** Starts recovering (a new session first when `newSession`), unless already under way. */
  start(newSession = false): void {
    if (newSession) this.#needsNewSession = true;
    if (this.#recovering || this.#host.isClosing()) return;
    const recovery = this.#recover();
    this.#recovering = recovery;
    void recovery.finally(() => {
      if (this.#recovering === recovery) this.#recovering = undefined;
    });
  }

  /** The error text of a request that cannot reach the server, with what to check when it never could. */
  unreachableMessage(reason: string): string {
    const url = this.#host.url;
    const check = this.#reached ? "" : ` Is the server running, and is ${url.href} the right URL?`;
    return `chat-mcp-bridge: cannot reach ${url.origin}: ${reason}.${check} The bridge keeps running and retries on the next request.`;
  }

  /** Reopens the session and/or waits for the server, then sends the held messages in order. */
  async #recover(): Promise<void> {
    const host = this.#host;
    const firstContact = !this.#reached;
    const deadline = Date.now() + reconnectWindowMs(host.reconnectWindowMs, firstContact);
    let delayMs = FIRST_RETRY_DELAY_MS;
    let lastError: unknown;
    while (!host.isClosing()) {
      try {
        if (this.#needsNewSession) {
          await host.openNewSession();
          this.#needsNewSession = false;
        }
        // The first held message goes alone: it proves the server is back before the rest follow it.
        const first = this.#held.shift();
        if (first) {
          try {
            await host.sendNow(first);
          } catch (error) {
            if (host.answeredAsIncurable(first, error)) continue;
            this.hold(first);
            if (isSessionGone(error) && host.sessionId()) this.#needsNewSession = true;
            throw error;
          }
        }
        this.reachedServer();
        const rest = this.#held;
        this.#held = [];
        this.#recovering = undefined;
        for (const outbound of rest) host.send(outbound);
        if (lastError !== undefined) host.log.info("reconnected to the server");
        return;
      } catch (error) {
        lastError = error;
        if (!isNetworkError(error) && !isSessionGone(error)) break;
        if (Date.now() + delayMs > deadline) break;
        // A server never reached gets one line, when the bridge gives up, not two.
        if (delayMs === FIRST_RETRY_DELAY_MS && !firstContact)
          host.log.info(`cannot reach ${host.url.origin}: ${host.describe(error)}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs = nextRetryDelay(delayMs);
      }
    }
    if (host.isClosing()) return;
    this.#giveUp(lastError);
  }

  /** The reconnect window ran out: answer what waits with an error and keep running for later requests. */
  #giveUp(error: unknown): void {
    const reason = this.#host.describe(error);
    const unreachable = isNetworkError(error) || isSessionGone(error);
    if (unreachable) this.#unreachable = reason;
    const message = unreachable ? this.unreachableMessage(reason) : `chat-mcp-bridge: ${reason}`;
    this.#host.log.info(message.slice("chat-mcp-bridge: ".length));
    const held = this.#held;
    this.#held = [];
    for (const outbound of held) this.#host.answerWithError(outbound, message);
    this.#host.failDelivered(message);
  }
}
