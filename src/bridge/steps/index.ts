/** Steps between a face and the upstream: each `tools/call` is judged here, then passes through them in order (the tool filter of `--ignore-tool` and `--read-only`, here, then --confirm-tool). */
import { isJsonObject as isObject } from "../messages/jsonrpc.js";
import type { ClientContext } from "../messages/request-model.js";

/** JSON-RPC "invalid params": what a call the bridge refuses is answered with, as MCP servers refuse an unknown tool. */
export const INVALID_PARAMS_ERROR_CODE = -32602;

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

/** A `tools/call` as a client sent it, before it is judged: its params may be anything. */
export type ToolCallRequest = Omit<ToolCallContext, "params"> & { params: unknown };

export type StepOutcome =
  /** Go on; `onResult` is told the server's result of the call sent (a step that follows its later rounds). */
  | {
      kind: "forward";
      params: ToolCallContext["params"];
      onResult?: (result: Record<string, unknown>) => void;
    }
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
 * The params of a call the steps can judge, or why not: a call whose shape hides the tool name, arguments, answers
 * or state is refused, never passed on for a server that reads it more loosely to run.
 */
export function judgeableParams(
  params: unknown,
): { params: ToolCallContext["params"] } | { refusal: string } {
  if (!isObject(params)) return { refusal: "its params are not an object" };
  if (params.name === undefined) return { refusal: "it names no tool" };
  if (typeof params.name !== "string") return { refusal: "its tool name is not a string" };
  for (const member of ["arguments", "inputResponses", "_meta"] as const)
    if (params[member] !== undefined && !isObject(params[member]))
      return { refusal: `its ${member} is not an object` };
  if (params.requestState !== undefined && typeof params.requestState !== "string")
    return { refusal: "its requestState is not a string" };
  return { params: params as ToolCallContext["params"] };
}

/**
 * Runs `call` through `steps` in order, once its params are judged. The first step that does not `forward` decides;
 * a `forward` hands its params to the next step. All forwarded: `forward` with the last params, and every step's
 * `onResult`. A local `answer` to a 2026-07-28 client says `resultType: "complete"` (that era requires it).
 */
export async function runToolCallSteps(
  steps: readonly ToolCallStep[],
  call: ToolCallRequest,
): Promise<StepOutcome> {
  const judged = judgeableParams(call.params);
  if ("refusal" in judged) return notSent(`an invalid tools/call (${judged.refusal})`);
  let params = judged.params;
  const followers: Array<(result: Record<string, unknown>) => void> = [];
  for (const step of steps) {
    const outcome = await step({ ...call, params });
    if (outcome.kind === "answer") return answerForEra(outcome.result, call.client);
    if (outcome.kind !== "forward") return outcome;
    params = outcome.params;
    if (outcome.onResult) followers.push(outcome.onResult);
  }
  if (followers.length === 0) return { kind: "forward", params };
  return {
    kind: "forward",
    params,
    onResult: (result) => {
      for (const follow of followers) follow(result);
    },
  };
}

function answerForEra(result: Record<string, unknown>, client: ClientContext): StepOutcome {
  if (client.era !== "modern" || "resultType" in result) return { kind: "answer", result };
  return { kind: "answer", result: { ...result, resultType: "complete" } };
}

/** A tool error result, as MCP servers answer a call they refuse (`isError: true`, the reason as text). */
export function toolErrorResult(message: string): Record<string, unknown> {
  return { content: [{ type: "text", text: message }], isError: true };
}

export interface ToolFilterOptions {
  /** `*` matches any run of characters, everything else is literal and case-sensitive. */
  ignoreTools: readonly string[];
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

  /** Why a call of `name` is refused; under `--read-only` a tool not (yet) listed `readOnlyHint: true` may write. */
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

  /** A `tools/list` result without the hidden tools (the same object when none), nor those without a string name: no rule can judge them. */
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

/** The filter as a step: a call of a hidden tool is refused with the flag that hides it. */
export function toolFilterStep(filter: ToolFilter): ToolCallStep {
  return ({ params }) => {
    const refusal = filter.refusal(params.name);
    return refusal === undefined ? { kind: "forward", params } : notSent(refusal);
  };
}

/** A call the bridge refuses, as a server refuses an unknown tool (-32602). */
function notSent(what: string): StepOutcome {
  const message = `chat-mcp-bridge: ${what}; it was not sent to the server`;
  return { kind: "error", error: { code: INVALID_PARAMS_ERROR_CODE, message } };
}
