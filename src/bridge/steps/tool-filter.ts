/** The tool filter (`--ignore-tool`, `--read-only`) as a step: a call of a hidden tool is refused here and never sent. */
import type { ToolFilter } from "../tool-filter.js";
import { INVALID_PARAMS_ERROR_CODE, type ToolCallStep } from "./index.js";

/** JSON-RPC "invalid params", what MCP servers answer for an unknown tool: the code for a tool the bridge hides. */
export const HIDDEN_TOOL_ERROR_CODE = INVALID_PARAMS_ERROR_CODE;

export function toolFilterStep(filter: ToolFilter): ToolCallStep {
  return ({ params }) => {
    const refusal = filter.refusal(params.name);
    if (refusal === undefined) return { kind: "forward", params };
    return {
      kind: "error",
      error: {
        code: HIDDEN_TOOL_ERROR_CODE,
        message: `chat-mcp-bridge: ${refusal}; it was not sent to the server`,
      },
    };
  };
}
