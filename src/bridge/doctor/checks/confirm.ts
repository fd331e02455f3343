/** `--confirm-tool`: the tools the client will see that need the person's approval (loaded only with the flag). */

import { ToolFilter } from "../../tool-filter.js";
import type { Check, CheckResult } from "../check.js";

export const confirmCheck: Check = {
  id: "confirm",
  title: "Tools that need confirming",
  needs: [],
  // Only with the flag, and only when the live check ran (its tools/list is what is judged).
  appliesTo: ({ options, statusOf }) =>
    (options.confirmTools?.length ?? 0) > 0 && statusOf("live") !== undefined && statusOf("live") !== "skip",
  deadlineMs: () => 5_000,
  async run({ options, found }): Promise<CheckResult> {
    const { toolsToConfirm } = await import("../../steps/confirm-tool.js");
    const visible = ToolFilter.from(options)?.filterListResult(found.listed) ?? found.listed;
    const tools = (visible as { tools?: Array<{ name?: unknown }> } | undefined)?.tools;
    if (!Array.isArray(tools)) return { status: "skip", detail: "not checked (no tools/list answer)" };
    const names = tools.flatMap((tool) => (typeof tool?.name === "string" ? [tool.name] : []));
    const { confirmed, unmatchedPatterns } = toolsToConfirm(options.confirmTools ?? [], names);
    const unmatched =
      unmatchedPatterns.length > 0
        ? `; --confirm-tool ${unmatchedPatterns.map((pattern) => JSON.stringify(pattern)).join(", ")} matches no listed tool`
        : "";
    return {
      status: "pass",
      detail: `${confirmed.length > 0 ? confirmed.join(", ") : "none"} (asked in the client's dialog before each call)${unmatched}`,
    };
  },
};
