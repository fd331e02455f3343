/** Steps between a stdio face and the upstream for `tools/call` (seam copy from the lead's brief; bridge23's version replaces it at merge). */
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
}

export type StepOutcome =
  | { kind: "forward"; params: ToolCallContext["params"] }
  | { kind: "answer"; result: Record<string, unknown> }
  | { kind: "drop" }
  | { kind: "input_required"; result: Record<string, unknown> };

export type ToolCallStep = (call: ToolCallContext) => StepOutcome | Promise<StepOutcome>;
