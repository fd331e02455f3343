/** What a host sends while the bridge is signed out, kept for the server in order: bounded in messages and bytes, and one notification of a kind. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import type { BridgeLog } from "../log/log.js";
import { isRequest } from "../messages/jsonrpc.js";

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
  /** The one kept message of a method kept once: each notification (the first), `logging/setLevel` (the last). */
  readonly #once = new Map<string, JSONRPCMessage>();
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
    const once = typeof method === "string" && (!isRequest(message) || method === "logging/setLevel");
    const earlier = once ? this.#once.get(method) : undefined;
    if (earlier && !isRequest(message)) return "collapsed";
    if (earlier) {
      this.remove(earlier);
      replaced?.(earlier);
    }
    const bytes = Buffer.byteLength(JSON.stringify(message));
    if (this.size >= this.limit || (this.size > 0 && this.#bytes + bytes > this.maxBytes)) {
      if (!this.#fullSaid)
        this.log.info(
          `${this.size} messages from the client (at most ${this.limit}, ${this.maxBytes} bytes) wait for ` +
            "the sign-in; later ones are refused until it ends",
        );
      this.#fullSaid = true;
      return "full";
    }
    if (once) this.#once.set(method, message);
    this.#messages.set(message, bytes);
    this.#bytes += bytes;
    return "queued";
  }

  /** Takes `message` out (a held request answered by the bridge, or cancelled): true when it was kept. */
  remove(message: JSONRPCMessage): boolean {
    const bytes = this.#messages.get(message);
    if (bytes === undefined) return false;
    this.#messages.delete(message);
    this.#bytes -= bytes;
    const method = (message as { method?: unknown }).method;
    if (typeof method === "string" && this.#once.get(method) === message) this.#once.delete(method);
    return true;
  }

  /** Everything kept, in order, and the queue emptied. */
  drain(): JSONRPCMessage[] {
    const messages = [...this.#messages.keys()];
    this.#messages.clear();
    this.#bytes = 0;
    this.#once.clear();
    return messages;
  }
}
