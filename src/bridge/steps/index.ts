/** Steps between a face and the upstream: each `tools/call` passes through them in order (tool filter, --confirm-tool). */
import type { ClientContext } from "../request-model.js";

export interface ToolCallContext {
  params: {
    name: string;
    arguments?: Record<string, unknown>;
    inputResponses?: Record<string, unknown>;
    requestState?: string;
    _meta?: Record<string, unknown>;
  };
  client: ClientContext;
  /** Set by the relays on a call sent with no id: nothing can answer it, so no step may ask or reply. */
  notification?: boolean;
}

export type StepOutcome =
  /** Go on (params possibly rewritten). */
  | { kind: "forward"; params: ToolCallContext["params"] }
  /** Answered locally (e.g. a tool error result). */
  | { kind: "answer"; result: Record<string, unknown> }
  /** A notification-shaped call: say nothing. */
  | { kind: "drop" }
  /** Refused locally with a JSON-RPC error, as a server refuses an unknown tool (-32602), nothing sent. */
  | { kind: "error"; error: { code: number; message: string } }
  /** An InputRequiredResult made by the bridge (`resultType: "input_required"`, `inputRequests`, `requestState`). */
  | { kind: "input_required"; result: Record<string, unknown> };

export type ToolCallStep = (call: ToolCallContext) => StepOutcome | Promise<StepOutcome>;

/**
 * Runs `call` through `steps` in order. The first step that does not `forward` decides; a `forward` hands its
 * (possibly rewritten) params to the next step. All forwarded: `forward` with the last params. A step's local
 * `answer` to a 2026-07-28 client says `resultType: "complete"` (that era requires it on every result); a
 * 2025-era client's never carries it.
 */
export async function runToolCallSteps(
  steps: readonly ToolCallStep[],
  call: ToolCallContext,
): Promise<StepOutcome> {
  let params = call.params;
  for (const step of steps) {
    const outcome = await step({ ...call, params });
    if (outcome.kind === "answer") return answerForEra(outcome.result, call.client);
    if (outcome.kind !== "forward") return outcome;
    params = outcome.params;
  }
  return { kind: "forward", params };
}

function answerForEra(result: Record<string, unknown>, client: ClientContext): StepOutcome {
  if (client.era !== "modern" || "resultType" in result) return { kind: "answer", result };
  return { kind: "answer", result: { ...result, resultType: "complete" } };
}

/** A tool error result, as MCP servers answer a call they refuse (`isError: true`, the reason as text). */
export function toolErrorResult(message: string): Record<string, unknown> {
  return { content: [{ type: "text", text: message }], isError: true };
}
