/** The tool filter (`--ignore-tool`, `--read-only`): which remote tools the client may see in a list and call (a hidden tool's call is refused as a step, never sent). */
import { INVALID_PARAMS_ERROR_CODE, type ToolCallStep } from "./index.js";

export interface ToolFilterOptions {
  /** Tool name patterns to hide; `*` matches any run of characters, everything else is literal and case-sensitive. */
  ignoreTools: readonly string[];
  /** Show only tools the server annotates `readOnlyHint: true`. */
  readOnly: boolean;
}

/** A tool as a `tools/list` answer carries it; only the fields the filter reads. */
interface ListedTool {
  name?: unknown;
  annotations?: { readOnlyHint?: unknown } | null;
}

/** Decides per tool, and rewrites `tools/list` results to hold only the visible tools. */
export class ToolFilter {
  readonly #patterns: ReadonlyArray<{ pattern: string; regex: RegExp }>;
  readonly #readOnly: boolean;
  /** Names the server listed with `readOnlyHint: true` (or without it), for `--read-only` decisions on calls. */
  readonly #readOnlyTools = new Map<string, boolean>();

  constructor(options: ToolFilterOptions) {
    this.#patterns = options.ignoreTools.map((pattern) => ({ pattern, regex: wildcardRegex(pattern) }));
    this.#readOnly = options.readOnly;
  }

  /** A filter for these options, or undefined when they hide nothing (the relay then skips it entirely). */
  static from(options: Partial<ToolFilterOptions>): ToolFilter | undefined {
    const ignoreTools = options.ignoreTools ?? [];
    if (ignoreTools.length === 0 && !options.readOnly) return undefined;
    return new ToolFilter({ ignoreTools, readOnly: options.readOnly === true });
  }

  /**
   * Why a call of `name` is refused (the flag that hides it), or undefined when it may go to the server. Under
   * `--read-only` a tool not (yet) listed with `readOnlyHint: true` is refused: unknown means possibly a write.
   */
  refusal(name: string): string | undefined {
    const matched = this.#patterns.find(({ regex }) => regex.test(name));
    if (matched) return `the tool "${name}" is hidden by --ignore-tool ${JSON.stringify(matched.pattern)}`;
    if (this.#readOnly && this.#readOnlyTools.get(name) !== true) {
      return this.#readOnlyTools.has(name)
        ? `the tool "${name}" is hidden by --read-only (the server does not annotate it readOnlyHint: true)`
        : `the tool "${name}" is not known to be read-only (--read-only calls only tools listed with readOnlyHint: true)`;
    }
    return undefined;
  }

  /**
   * A `tools/list` result with the hidden tools removed (the same object when nothing was hidden). A tool without
   * a string name is hidden too: no rule can judge it, and no call of it would pass the steps.
   */
  filterListResult(result: unknown): unknown {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools)) return result;
    for (const tool of tools as ListedTool[]) {
      if (typeof tool?.name === "string")
        this.#readOnlyTools.set(tool.name, tool.annotations?.readOnlyHint === true);
    }
    const visible = (tools as ListedTool[]).filter(
      (tool) => typeof tool?.name === "string" && this.refusal(tool.name) === undefined,
    );
    return visible.length === tools.length ? result : { ...(result as object), tools: visible };
  }
}

/** `*` matches any run of characters (including none); every other character stands for itself. */
export function wildcardRegex(pattern: string): RegExp {
  const literal = pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${literal.join(".*")}$`, "s");
}

/** JSON-RPC "invalid params", what MCP servers answer for an unknown tool: the code for a tool the bridge hides. */
export const HIDDEN_TOOL_ERROR_CODE = INVALID_PARAMS_ERROR_CODE;

/** The filter as a step: a call of a hidden tool is refused with the flag that hides it. */
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
