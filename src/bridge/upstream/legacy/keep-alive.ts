/** `--keep-alive` / `--ping-interval`: a `ping` on a 2025-era session once it has been idle that long, so proxies and load balancers keep it. */
import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { type BridgeLog, describeError } from "../../log/log.js";
import type { RemoteTransport } from "./streamable-http-transport.js";

export interface KeepAliveOptions {
  /** Idle time before a ping, and between pings while nothing else goes either way. */
  intervalMs: number;
  log: BridgeLog;
}

/**
 * `transport` with a ping after every `intervalMs` without an exchange (a message sent or received). The pings and
 * their answers are the bridge's own: the client never sees them. A failed ping is logged and handed to the
 * relay as the transport's error, so a session the server forgot is reopened as the relay reopens it.
 */
export function withKeepAlive(transport: RemoteTransport, options: KeepAliveOptions): RemoteTransport {
  return new KeepAliveTransport(transport, options);
}

class KeepAliveTransport implements RemoteTransport {
  readonly #inner: RemoteTransport;
  readonly #options: KeepAliveOptions;
  // A random part: a client id (any string) can never be mistaken for a ping's.
  readonly #prefix = `chat-mcp-bridge/keep-alive/${randomUUID()}/`;
  #count = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #onmessage: RemoteTransport["onmessage"];

  constructor(inner: RemoteTransport, options: KeepAliveOptions) {
    this.#inner = inner;
    this.#options = options;
    inner.onmessage = (message, raw, relatedRequestId) => {
      this.#exchanged();
      if (this.#isPingAnswer(message)) return;
      this.#onmessage?.(message, raw, relatedRequestId);
    };
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }
  get onmessage(): RemoteTransport["onmessage"] {
    return this.#onmessage;
  }
  set onmessage(handler: RemoteTransport["onmessage"]) {
    this.#onmessage = handler;
  }
  get onerror(): ((error: Error) => void) | undefined {
    return this.#inner.onerror;
  }
  set onerror(handler: ((error: Error) => void) | undefined) {
    this.#inner.onerror = handler;
  }
  get onrequestlost(): ((id: RequestId, reason: string) => void) | undefined {
    return this.#inner.onrequestlost;
  }
  set onrequestlost(handler: ((id: RequestId, reason: string) => void) | undefined) {
    this.#inner.onrequestlost = handler;
  }

  async start(): Promise<void> {
    await this.#inner.start();
    this.#arm();
  }

  send(message: JSONRPCMessage, options?: { mustNotRepeat?: boolean }): Promise<void> {
    this.#exchanged();
    return this.#inner.send(message, options);
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion(version);
  }

  terminateSession(): Promise<void> {
    this.#stop();
    return this.#inner.terminateSession();
  }

  close(): Promise<void> {
    this.#stop();
    return this.#inner.close();
  }

  #stop(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #exchanged(): void {
    if (this.#timer) this.#arm();
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#ping(), this.#options.intervalMs);
    // A ping is never a reason for the process to stay up.
    this.#timer.unref();
  }

  async #ping(): Promise<void> {
    // No session yet (before `initialize`): nothing to keep alive.
    if (this.#closed || !this.#inner.sessionId) return this.#arm();
    const id = `${this.#prefix}${++this.#count}`;
    try {
      await this.#inner.send({ jsonrpc: "2.0", id, method: "ping" });
      this.#options.log.debug("keep-alive ping sent");
    } catch (error) {
      if (this.#closed) return;
      this.#options.log.info(`keep-alive ping to the server failed: ${describeError(error)}`);
      this.#inner.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
    this.#arm();
  }

  #isPingAnswer(message: JSONRPCMessage): boolean {
    return (
      "id" in message &&
      typeof message.id === "string" &&
      message.id.startsWith(this.#prefix) &&
      !("method" in message)
    );
  }
}
