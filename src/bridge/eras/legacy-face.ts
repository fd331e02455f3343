/** The stdio face a 2025-era client sees: `initialize` and its session semantics (ping, setLevel), and requests the bridge puts to it. */

import type { ClientCapabilities, JSONRPCMessage, LoggingLevel } from "@modelcontextprotocol/client";
import { BridgeRequestIds, isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";
import {
  anonymousClient,
  type ClientContext,
  implementationOf,
  type ToClient,
} from "../messages/request-model.js";
import { negotiatedLegacyVersion } from "../translate/discover.js";

/** How long the bridge waits for the person behind the client to answer one of its requests (an elicitation form). */
export const CLIENT_ANSWER_TIMEOUT_MS = 10 * 60 * 1000;

/** Ends one of the bridge's requests to the client: with an error, or with its result. */
type Settle = (error: Error | undefined, result?: Json) => void;

export class LegacyFace {
  readonly #toClient: ToClient;
  readonly #waiting = new Map<string, Settle>();
  #client: ClientContext | undefined;
  readonly #ids = new BridgeRequestIds("ask");

  constructor(toClient: ToClient) {
    this.#toClient = toClient;
  }

  /** The client as it described itself at `initialize` (anonymous until then), with the level it set. */
  get client(): ClientContext {
    return this.#client ?? anonymousClient("legacy");
  }

  /** Records what the client declared at `initialize`; returns the protocol version it gets. */
  initialize(params: unknown): string {
    const given = isObject(params) ? params : {};
    const version = negotiatedLegacyVersion(given.protocolVersion);
    this.#client = {
      era: "legacy",
      protocolVersion: version,
      capabilities: (isObject(given.capabilities) ? given.capabilities : {}) as ClientCapabilities,
      clientInfo: implementationOf(given.clientInfo),
    };
    return version;
  }

  /** `logging/setLevel`: from now on, the log level every request carries upstream. */
  setLogLevel(params: unknown): void {
    const level = isObject(params) ? params.level : undefined;
    if (typeof level === "string") this.#client = { ...this.client, logLevel: level as LoggingLevel };
  }

  /** Sends a request to the client; resolves with its result, rejects with its error, on `signal`, or after the timeout. */
  ask(method: string, params: Json, signal: AbortSignal): Promise<Json> {
    const id = this.#ids.next();
    return new Promise<Json>((resolve, reject) => {
      const settle: Settle = (error, result) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#waiting.delete(id);
        if (error) reject(error);
        else resolve(result ?? {});
      };
      const onAbort = () => {
        settle(new Error("cancelled"));
        this.#toClient({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: "the call it belonged to was cancelled" },
        });
      };
      const timeout = new Error(
        `the client did not answer ${method} within ${CLIENT_ANSWER_TIMEOUT_MS / 1000} s`,
      );
      const timer = setTimeout(() => settle(timeout), CLIENT_ANSWER_TIMEOUT_MS);
      timer.unref();
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(id, settle);
      this.#toClient({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage);
    });
  }

  /** A response from the client: true when it answered one of the bridge's own requests (then it is consumed here). */
  onClientResponse(message: Json): boolean {
    if (typeof message.id !== "string") return false;
    const waiting = this.#waiting.get(message.id);
    if (!waiting) return this.#ids.owns(message.id);
    if (isObject(message.result)) waiting(undefined, message.result);
    else {
      const error = isObject(message.error) ? message.error : {};
      waiting(new Error(`the client refused: ${String(error.message ?? "no reason given")}`));
    }
    return true;
  }

  close(): void {
    for (const settle of this.#waiting.values()) settle(new Error("the bridge is shutting down"));
  }
}
