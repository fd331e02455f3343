/** `--confirm-tool`: the tools the client will see that need the person's approval, and a pattern that matches none (loaded only with the flag). */

import { ToolFilter } from "../../steps/tool-filter.js";
import { listedTools, unmatchedToolRules } from "../../tool-rules-audit.js";
import type { Check, CheckResult } from "../check.js";
import { unmatchedRulesFailure } from "./hidden-tools.js";

export const confirmCheck: Check = {
  id: "confirm",
  title: "Tools that need confirming",
  needs: [],
  // Only with the flag, and only when the live check ran (its tools/list is what is judged).
  appliesTo: ({ options, statusOf }) =>
    (options.confirmTools?.length ?? 0) > 0 && statusOf("live") !== undefined && statusOf("live") !== "skip",
  deadlineMs: () => 5_000,
  async run({ options, found }): Promise<CheckResult> {
    const tools = listedTools(found.listed);
    if (!tools) return { status: "skip", detail: "not checked (no tools/list answer)" };
    // A pattern that matches no tool protects nothing: the tool it was meant for runs without asking.
    const unmatched = unmatchedToolRules({ confirmTools: options.confirmTools ?? [] }, tools);
    if (unmatched.length > 0) return unmatchedRulesFailure(unmatched);
    const { toolsToConfirm } = await import("../../steps/confirm-tool.js");
    const visible =
      listedTools(ToolFilter.from(options)?.filterListResult(found.listed) ?? found.listed) ?? [];
    const confirmed = toolsToConfirm(
      options.confirmTools ?? [],
      visible.map((tool) => tool.name),
    );
    return {
      status: "pass",
      detail: `${confirmed.length > 0 ? confirmed.join(", ") : "none"} (asked in the client's dialog before each call)`,
    };
  },
};
