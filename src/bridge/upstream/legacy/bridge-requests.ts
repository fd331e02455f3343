/** The bridge's own requests on a legacy session (a ping, the client's `initialize` replayed), kept from the client. */
import type { JSONRPCMessage, JSONRPCRequest } from "@modelcontextprotocol/client";
import { BridgeRequestIds } from "../../messages/jsonrpc.js";
import type { RemoteTransport } from "./streamable-http-transport.js";

/** How long a new session has to answer the replayed `initialize`. */
const REPLAY_TIMEOUT_MS = 30_000;

export class BridgeRequests {
  readonly #ids = new BridgeRequestIds("session");
  readonly #waiters = new Map<string, (message: JSONRPCMessage) => void>();

  /** Takes the answer to one of the bridge's requests; false for anything else (the client's). */
  tookAnswer(message: JSONRPCMessage): boolean {
    if (!("id" in message) || !this.#ids.owns(message.id)) return false;
    this.#waiters.get(message.id)?.(message);
    return true;
  }

  /** Pings the session; rejects as the transport does (a 404 says the server forgot it). */
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

  /**
   * Replays the client's `initialize` on a new session and waits for its answer; resolves with the protocol
   * version the server chose, if it said one.
   */
  async replayInitialize(
    transport: RemoteTransport,
    initialize: JSONRPCRequest,
  ): Promise<string | undefined> {
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
      await transport.send({ ...initialize, id });
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
}
