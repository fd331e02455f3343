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
    const pending = this.#pending.get(requestKey(id));
    this.#pending.delete(requestKey(id));
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
   * Holds the cancellation of a request the server has not accepted yet (true), calling `send` once it has or was
   * answered. Sent at once it could overtake its request (a request may wait for a pooled connection): the server
   * would drop it and run the call. False when the request is unknown, answered or accepted already.
   */
  holdCancellation(id: RequestId, send: () => void): boolean {
    const pending = this.#pending.get(requestKey(id));
    if (!pending || pending.deliveredOn) return false;
    pending.cancellations ??= [];
    pending.cancellations.push(send);
    return true;
  }

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

function release(pending: PendingRequest): void {
  const waiting = pending.cancellations;
  pending.cancellations = undefined;
  for (const send of waiting ?? []) send();
}

/**
 * Tools the server calls safe to repeat (`readOnlyHint`, `idempotentHint`, from the lists that pass). Any other call
 * goes again only if it never reached the server: a write run twice is worse than an unknown outcome.
 */
export class ResendPolicy {
  readonly #repeatableTools = new Map<string, boolean>();

  learnTools(result: unknown): void {
    const tools = (result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as Array<{ name?: unknown; annotations?: Record<string, unknown> }>) {
      if (typeof tool?.name !== "string") continue;
      const hints = tool.annotations;
      this.#repeatableTools.set(tool.name, hints?.readOnlyHint === true || hints?.idempotentHint === true);
    }
  }

  isRepeatable(message: JSONRPCMessage): boolean {
    if (!isRequest(message) || message.method !== "tools/call") return true;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    return typeof name === "string" && this.#repeatableTools.get(name) === true;
  }
}
