/** The tool rule checks, run on the live check's `tools/list`: tools hidden from the client, tools that need confirming, and rules that match no tool. */

import { ToolFilter } from "../../steps/tool-filter.js";
import { listedTools, type UnmatchedRule, unmatchedToolRules } from "../../steps/tool-rules-audit.js";
import type { Check, CheckResult } from "../check.js";

/** `--ignore-tool` and `--read-only`: the listed tools the client will not see. */
export const hiddenToolsCheck: Check = {
  id: "hidden-tools",
  title: "Tools hidden from the client",
  needs: [],
  // Only with the flags, and only when the live check ran (its tools/list is what is judged).
  appliesTo: ({ options, statusOf }) =>
    ((options.ignoreTools?.length ?? 0) > 0 || options.readOnly === true) &&
    statusOf("live") !== undefined &&
    statusOf("live") !== "skip",
  deadlineMs: () => 5_000,
  async run({ options, found }): Promise<CheckResult> {
    const tools = listedTools(found.listed);
    if (!tools) return { status: "skip", detail: "not checked (no tools/list answer)" };
    const rules = { ignoreTools: options.ignoreTools ?? [], readOnly: options.readOnly === true };
    const unmatched = unmatchedToolRules(rules, tools);
    if (unmatched.length > 0) return unmatchedRulesFailure(unmatched);
    const visible = new Set(
      listedTools(ToolFilter.from(rules)?.filterListResult(found.listed))?.map((tool) => tool.name),
    );
    const hidden = tools.filter((tool) => !visible.has(tool.name)).map((tool) => tool.name);
    return {
      status: "pass",
      detail: `${hidden.length > 0 ? hidden.join(", ") : "none"} (calls of them are refused by the bridge)`,
    };
  },
};

/** A rule that matches no listed tool fails its check: the person trusts a protection that is not there. */
function unmatchedRulesFailure(unmatched: readonly UnmatchedRule[]): CheckResult {
  const patterns = unmatched.filter((rule) => rule.pattern !== undefined);
  const meant = patterns.flatMap((rule) => (rule.closest ? [`${rule.flag} ${rule.closest}`] : []));
  const fixes: string[] = [];
  if (meant.length > 0) fixes.push(`name the tool as the server lists it (${meant.join(", ")})`);
  if (patterns.some((rule) => rule.closest === undefined))
    fixes.push("name tools as the server lists them (the live check's tools/list)");
  if (patterns.length > 0) fixes.push("patterns match whole names, case-sensitively, with * as a wildcard");
  if (unmatched.some((rule) => rule.flag === "--read-only"))
    fixes.push("leave out --read-only: this server marks no tool read-only, so it would hide every tool");
  return {
    status: "fail",
    detail: unmatched.map((rule) => rule.warning).join(" / "),
    fix: fixes.join("; "),
  };
}

/** `--confirm-tool`: the tools the client will see that need the person's approval (its step loaded only with the flag). */
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
