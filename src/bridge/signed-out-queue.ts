/** What a host sends while the bridge is signed out, kept for the server in order: bounded, and one notification of a kind. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { isRequest } from "./jsonrpc.js";
import type { BridgeLog } from "./log.js";
import { requestKey } from "./request-ids.js";

/**
 * How many messages wait for the sign-in at most. A host sends a handful at start (`initialize`, its lists, a
 * listen, a call or two); anything past this is a host in a loop, refused so that memory stays flat.
 */
export const SIGNED_OUT_QUEUE_LIMIT = 256;

export type Queued = "queued" | "collapsed" | "full";

export class SignedOutQueue {
  /** Insertion-ordered: the order the host sent them in, which is the order the server gets them. */
  readonly #messages = new Set<JSONRPCMessage>();
  /** The one kept notification of each method: a second list change of a kind adds nothing. */
  readonly #notifications = new Map<string, JSONRPCMessage>();
  #setLevel: JSONRPCMessage | undefined;

  #fullSaid = false;

  constructor(
    private readonly log: Pick<BridgeLog, "info">,
    readonly limit = SIGNED_OUT_QUEUE_LIMIT,
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
      if (this.#messages.size >= this.limit) return this.#full();
      this.#notifications.set(method, message);
      this.#messages.add(message);
      return "queued";
    }
    if (method === "logging/setLevel" && this.#setLevel) {
      this.#messages.delete(this.#setLevel);
      replaced?.(this.#setLevel);
      this.#setLevel = undefined;
    }
    if (this.#messages.size >= this.limit) return this.#full();
    if (method === "logging/setLevel") this.#setLevel = message;
    this.#messages.add(message);
    return "queued";
  }

  #full(): "full" {
    if (!this.#fullSaid)
      this.log.info(
        `${this.limit} messages from the client wait for the sign-in; later ones are refused until it ends`,
      );
    this.#fullSaid = true;
    return "full";
  }

  /** Takes `message` out (a held request answered by the bridge, or cancelled): true when it was kept. */
  remove(message: JSONRPCMessage): boolean {
    if (!this.#messages.delete(message)) return false;
    const method = (message as { method?: unknown }).method;
    if (typeof method === "string" && this.#notifications.get(method) === message)
      this.#notifications.delete(method);
    if (this.#setLevel === message) this.#setLevel = undefined;
    return true;
  }

  /** Everything kept, in order, and the queue emptied. */
  drain(): JSONRPCMessage[] {
    const messages = [...this.#messages];
    this.#messages.clear();
    this.#notifications.clear();
    this.#setLevel = undefined;
    return messages;
  }
}

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
