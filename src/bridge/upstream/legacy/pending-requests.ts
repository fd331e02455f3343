/** The client's requests the legacy upstream still owes an answer, each answered exactly once, and which of its messages may be sent twice. */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { redact } from "../../../internal/redact.js";
import { isRequest, requestKey } from "../../messages/jsonrpc.js";

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
  /** The client's cancellations of it, waiting until the server has it (see `holdCancellation`). */
  cancellations?: Array<() => void>;
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

  /** The server accepted the request on `transport`: cancellations waiting for that go out now. */
  deliveredOn(id: RequestId, transport: object): void {
    const pending = this.#pending.get(requestKey(id));
    if (!pending) return;
    pending.deliveredOn = transport;
    release(pending);
  }

  /**
   * Holds the client's cancellation of a request the server has not accepted yet (true), calling `send` once it
   * has, or once the bridge answered it (its POST may have reached the server all the same). Sent at once, the
   * cancellation could overtake its request (each is its own POST; a request may wait for a pooled connection or
   * for the session's event stream, a notification never does): the server, not knowing the id yet, would drop
   * the cancellation and then run the call. False when the request is unknown, answered or already accepted.
   */
  holdCancellation(id: RequestId, send: () => void): boolean {
    const pending = this.#pending.get(requestKey(id));
    if (!pending || pending.deliveredOn) return false;
    pending.cancellations ??= [];
    pending.cancellations.push(send);
    return true;
  }

  /** Answers the request with a bridge error, unless it was answered already. */
  answerWithError(id: RequestId, message: string): boolean {
    const key = requestKey(id);
    const pending = this.#pending.get(key);
    if (!pending) return false;
    this.#pending.delete(key);
    this.#toClient(errorResponse(id, message));
    release(pending);
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

/** Sends the cancellations held for `pending`, once. */
function release(pending: PendingRequest): void {
  const waiting = pending.cancellations;
  pending.cancellations = undefined;
  for (const send of waiting ?? []) send();
}

/**
 * Tools the server says are safe to call twice (annotations `readOnlyHint` or `idempotentHint`, learned from the
 * tools/list answers that pass through). Any other tools/call is sent again only if it never reached the server:
 * running a write twice (two chats, two messages) is worse than saying the outcome is unknown.
 */
export class ResendPolicy {
  readonly #repeatableTools = new Map<string, boolean>();

  /** Learns the tools' hints from a tools/list result. */
  learnTools(result: unknown): void {
    const tools = (result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as Array<{ name?: unknown; annotations?: Record<string, unknown> }>) {
      if (typeof tool?.name !== "string") continue;
      const hints = tool.annotations;
      this.#repeatableTools.set(tool.name, hints?.readOnlyHint === true || hints?.idempotentHint === true);
    }
  }

  /** Whether sending this message a second time is harmless. */
  isRepeatable(message: JSONRPCMessage): boolean {
    if (!isRequest(message) || message.method !== "tools/call") return true;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    return typeof name === "string" && this.#repeatableTools.get(name) === true;
  }
}
