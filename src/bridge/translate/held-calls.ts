/** The state a 2025-era server's mid-call requests leave in the bridge while a 2026-07-28 client answers them by retrying (bounded in count and time). */
import { randomUUID } from "node:crypto";
import type { RequestId } from "@modelcontextprotocol/client";

type Json = Record<string, unknown>;

/** Calls held at once waiting for a client's retry; one more and the server's request is refused. */
export const MAX_HELD_CALLS = 64;
/** How long a held call waits for the client's retry before the bridge gives up on it. */
export const HELD_CALL_TIMEOUT_MS = 5 * 60 * 1000;

/** The methods a server may ask of a client mid-call, which a 2026 client answers as `inputRequests`. */
export const INPUT_METHODS: ReadonlySet<string> = new Set([
  "elicitation/create",
  "sampling/createMessage",
  "roots/list",
]);

/** One request the server put to the client, waiting for its answer among the retry's `inputResponses`. */
export interface PendingServerRequest {
  serverId: RequestId;
  method: string;
  params: Json;
}

/** A modern client's request on its way through the legacy session (under an id of the bridge's). */
export interface ModernCall {
  upstreamId: string;
  method: string;
  /** The client request the call's next answer goes to; undefined while held for the client's retry. */
  clientId: RequestId | undefined;
  /** Server requests not yet answered, by their key in `inputRequests`. */
  pending: Map<string, PendingServerRequest>;
  /** The `requestState` the client echoes when it retries (set while held). */
  state?: string;
  /** The server's answer when it came while the call was held. */
  settled?: Json;
  timer?: NodeJS.Timeout;
}

/** The `input_required` result a held call answers its client with. */
export function inputRequiredResult(call: ModernCall): Json {
  const inputRequests = Object.fromEntries(
    [...call.pending].map(([key, request]) => [key, { method: request.method, params: request.params }]),
  );
  return { resultType: "input_required", inputRequests, requestState: call.state };
}

/** A fresh `requestState` token: opaque to the client, the key of the held call in the bridge. */
export const newRequestState = (): string => `chat-mcp-bridge/${randomUUID()}`;
