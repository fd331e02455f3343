/** The client's requests the legacy upstream still owes an answer, each answered exactly once. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { redact } from "../../../internal/redact.js";
import { requestKey } from "../../request-ids.js";

/** JSON-RPC error code for failures of the bridge itself (server unreachable, session lost, auth failed). */
export const BRIDGE_ERROR_CODE = -32000;

/** A bridge error answer to the request `id`; the message is redacted. */
export function errorResponse(id: RequestId, message: string): JSONRPCMessage {
  return { jsonrpc: "2.0", id, error: { code: BRIDGE_ERROR_CODE, message: redact(message) } };
}

interface PendingRequest {
  id: RequestId;
  method: string;
  /** The transport whose POST carried it, once the server accepted it; its answer can only come from there. */
  deliveredOn?: object;
}

/** Requests by id (a number 1 and a string "1" apart), each taken out when it is answered. */
export class PendingRequests {
  readonly #pending = new Map<string, PendingRequest>();
  readonly #toClient: (message: JSONRPCMessage) => void;

  constructor(toClient: (message: JSONRPCMessage) => void) {
    this.#toClient = toClient;
  }

  add(id: RequestId, method: string): void {
    this.#pending.set(requestKey(id), { id, method });
  }

  /** Takes the request out (its answer arrived); undefined when it was answered already. */
  take(id: RequestId): { method: string } | undefined {
    const key = requestKey(id);
    const pending = this.#pending.get(key);
    if (pending) this.#pending.delete(key);
    return pending;
  }

  /** The server accepted the request on `transport`. */
  deliveredOn(id: RequestId, transport: object): void {
    const pending = this.#pending.get(requestKey(id));
    if (pending) pending.deliveredOn = transport;
  }

  /** Answers the request with a bridge error, unless it was answered already. */
  answerWithError(id: RequestId, message: string): boolean {
    if (!this.#pending.delete(requestKey(id))) return false;
    this.#toClient(errorResponse(id, message));
    return true;
  }

  /** Answers with `message` every request the server accepted (on `transport`, or on any when not given). */
  failDelivered(message: string, transport?: object): void {
    for (const [key, pending] of this.#pending) {
      if (pending.deliveredOn && (transport === undefined || pending.deliveredOn === transport)) {
        this.#pending.delete(key);
        this.#toClient(errorResponse(pending.id, message));
      }
    }
  }
}
