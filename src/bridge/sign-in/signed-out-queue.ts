/** What a host sends while the bridge is signed out, kept for the server in order: bounded in messages and bytes, and one notification of a kind. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { BridgeLog } from "../log/log.js";
import { isRequest, requestKey } from "../messages/jsonrpc.js";

/**
 * How many messages wait for the sign-in at most. A host sends a handful at start (`initialize`, its lists, a
 * listen, a call or two); anything past this is a host in a loop, refused so that memory stays flat.
 */
export const SIGNED_OUT_QUEUE_LIMIT = 256;
/**
 * How many bytes of messages wait for the sign-in at most (one message larger than this is still kept while nothing
 * else waits: each is bounded by --max-message-size). 16 calls of 30 MB once took the bridge from 65 to 734 MB.
 */
export const SIGNED_OUT_QUEUE_BYTES = 64 * 1024 * 1024;

export type Queued = "queued" | "collapsed" | "full";

export class SignedOutQueue {
  /** Insertion-ordered (the order the host sent them in, which is the order the server gets them), with their bytes. */
  readonly #messages = new Map<JSONRPCMessage, number>();
  #bytes = 0;
  /** The one kept notification of each method: a second list change of a kind adds nothing. */
  readonly #notifications = new Map<string, JSONRPCMessage>();
  #setLevel: JSONRPCMessage | undefined;

  #fullSaid = false;

  constructor(
    private readonly log: Pick<BridgeLog, "info">,
    readonly limit = SIGNED_OUT_QUEUE_LIMIT,
    readonly maxBytes = SIGNED_OUT_QUEUE_BYTES,
  ) {}

  get size(): number {
    return this.#messages.size;
  }

  /**
   * Keeps `message` for the server. A notification of a method already kept is "collapsed" (dropped); a
   * `logging/setLevel` replaces the one kept (`replaced` names it: its answer was given, the server's is not owed).
   */
  push(message: JSONRPCMessage, replaced?: (earlier: JSONRPCMessage) => void): Queued {
    const method = (message as { method?: unknown }).method;
    if (!isRequest(message) && typeof method === "string") {
      if (this.#notifications.has(method)) return "collapsed";
      const bytes = bytesOf(message);
      if (!this.#hasRoom(bytes)) return this.#full();
      this.#notifications.set(method, message);
      this.#add(message, bytes);
      return "queued";
    }
    if (method === "logging/setLevel" && this.#setLevel) {
      this.#delete(this.#setLevel);
      replaced?.(this.#setLevel);
      this.#setLevel = undefined;
    }
    const bytes = bytesOf(message);
    if (!this.#hasRoom(bytes)) return this.#full();
    if (method === "logging/setLevel") this.#setLevel = message;
    this.#add(message, bytes);
    return "queued";
  }

  #hasRoom(bytes: number): boolean {
    if (this.#messages.size >= this.limit) return false;
    return this.#messages.size === 0 || this.#bytes + bytes <= this.maxBytes;
  }

  #add(message: JSONRPCMessage, bytes: number): void {
    this.#messages.set(message, bytes);
    this.#bytes += bytes;
  }

  #delete(message: JSONRPCMessage): boolean {
    const bytes = this.#messages.get(message);
    if (bytes === undefined) return false;
    this.#messages.delete(message);
    this.#bytes -= bytes;
    return true;
  }

  #full(): "full" {
    if (!this.#fullSaid)
      this.log.info(
        `${this.#messages.size} messages from the client (at most ${this.limit}, ${this.maxBytes} bytes) wait for ` +
          "the sign-in; later ones are refused until it ends",
      );
    this.#fullSaid = true;
    return "full";
  }

  /** Takes `message` out (a held request answered by the bridge, or cancelled): true when it was kept. */
  remove(message: JSONRPCMessage): boolean {
    if (!this.#delete(message)) return false;
    const method = (message as { method?: unknown }).method;
    if (typeof method === "string" && this.#notifications.get(method) === message)
      this.#notifications.delete(method);
    if (this.#setLevel === message) this.#setLevel = undefined;
    return true;
  }

  /** Everything kept, in order, and the queue emptied. */
  drain(): JSONRPCMessage[] {
    const messages = [...this.#messages.keys()];
    this.#messages.clear();
    this.#bytes = 0;
    this.#notifications.clear();
    this.#setLevel = undefined;
    return messages;
  }
}

/** A kept message's size: its JSON text's (the line it came as, less the newline). */
const bytesOf = (message: JSONRPCMessage): number => Buffer.byteLength(JSON.stringify(message));

type HostRequest = Extract<JSONRPCMessage, { id: RequestId; method: string }>;

/** The calls and lists the bridge holds for the sign-in, each with the timer that answers it when the host's patience ends. */
export class HeldRequests {
  readonly #held = new Map<string, { message: HostRequest; timer: NodeJS.Timeout }>();

  /** Holds `message` for `ms` (unless it is held already), then `expired` answers it. */
  hold(message: HostRequest, ms: number, expired: () => void): void {
    const key = requestKey(message.id);
    if (this.#held.has(key)) return;
    const timer = setTimeout(() => {
      this.#held.delete(key);
      expired();
    }, ms);
    this.#held.set(key, { message, timer });
  }

  get(id: RequestId): HostRequest | undefined {
    return this.#held.get(requestKey(id))?.message;
  }

  /** Stops holding `message` (answered or cancelled); its timer never fires. */
  release(message: HostRequest): void {
    const key = requestKey(message.id);
    const entry = this.#held.get(key);
    if (entry?.message !== message) return;
    clearTimeout(entry.timer);
    this.#held.delete(key);
  }

  /** Every held request, released (their timers stopped), in the order they were held. */
  releaseAll(which: (message: HostRequest) => boolean = () => true): HostRequest[] {
    const released: HostRequest[] = [];
    for (const { message } of [...this.#held.values()]) {
      if (!which(message)) continue;
      this.release(message);
      released.push(message);
    }
    return released;
  }
}
