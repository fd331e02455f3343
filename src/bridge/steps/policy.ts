/** The bridge's policy between the faces and the upstream, built once from the flags: the steps of every tools/call and what a tools/list answer shows. */
import type { BridgeLog } from "../log/log.js";
import type { ClientContext } from "../messages/request-model.js";
import { type ToolCallStep, ToolFilter, toolFilterStep } from "./index.js";
import type { ToolsListed } from "./tool-rules-audit.js";

/** What a relay applies once per message, whichever era the client and the server speak. */
export interface ToolPolicy {
  /** The steps every tools/call passes, in order: hidden tools are refused before anyone is asked about them. */
  readonly steps: readonly ToolCallStep[];
  /** A server's tools/list result as the client may see it: the audit reads the whole list, hidden tools are removed. */
  listed(result: unknown, client: ClientContext): unknown;
}

export interface ToolPolicyParts {
  steps?: readonly ToolCallStep[];
  /** Hides tools from every list (its calls are refused by its step, which `steps` must hold). */
  toolFilter?: ToolFilter;
  /** Sees each tools/list answer before the client does (rules that match no tool are said). */
  onToolsListed?: ToolsListed;
}

/** A policy from its parts; with none, every call and list passes as the server sent it. */
export function toolPolicy({ steps = [], toolFilter, onToolsListed }: ToolPolicyParts = {}): ToolPolicy {
  return {
    steps,
    listed(result, client) {
      onToolsListed?.(result, client);
      return toolFilter ? toolFilter.filterListResult(result) : result;
    },
  };
}

export interface ToolPolicyOptions {
  ignoreTools?: readonly string[];
  readOnly?: boolean;
  confirmTools?: readonly string[];
  log: BridgeLog;
  onToolsListed?: ToolsListed;
}

/** The policy the flags ask for: the tool filter's step first, then `--confirm-tool` (its module loads only with the flag). */
export async function createToolPolicy(options: ToolPolicyOptions): Promise<ToolPolicy> {
  const toolFilter = ToolFilter.from({ ignoreTools: options.ignoreTools, readOnly: options.readOnly });
  const steps: ToolCallStep[] = toolFilter ? [toolFilterStep(toolFilter)] : [];
  if (options.confirmTools?.length) {
    const { createConfirmToolStep } = await import("./confirm-tool.js");
    steps.push(createConfirmToolStep({ patterns: options.confirmTools, log: options.log }));
  }
  return toolPolicy({ steps, toolFilter, onToolsListed: options.onToolsListed });
}
