/** The bridge's own JSON-RPC request ids, told apart from any client's, and the one map key for a request id. */
import { randomUUID } from "node:crypto";

/** A random part per process: a client id (any string) can never be mistaken for one the bridge minted. */
const PROCESS_PREFIX = `chat-mcp-bridge/${randomUUID()}/`;

/** A map key for a request id (or progress token): the number 1 and the string "1" are different requests. */
export const requestKey = (id: unknown): string => (typeof id === "number" ? `n${id}` : `s${String(id)}`);

/** Mints the bridge's ids for one purpose (`<process prefix><purpose>/<n>`), and knows them again. */
export class BridgeRequestIds {
  readonly #prefix: string;
  #count = 0;

  constructor(purpose: string) {
    this.#prefix = `${PROCESS_PREFIX}${purpose}/`;
  }

  next(): string {
    return `${this.#prefix}${++this.#count}`;
  }

  /** Whether `id` was minted for this purpose (by this minter or another of the same purpose). */
  owns(id: unknown): id is string {
    return typeof id === "string" && id.startsWith(this.#prefix);
  }
}
