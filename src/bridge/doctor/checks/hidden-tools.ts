/** `--ignore-tool` and `--read-only`: the listed tools the client will not see, and a rule that matches no tool. */

import { ToolFilter } from "../../steps/tool-filter.js";
import { listedTools, type UnmatchedRule, unmatchedToolRules } from "../../tool-rules-audit.js";
import type { Check, CheckResult } from "../check.js";

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
export function unmatchedRulesFailure(unmatched: readonly UnmatchedRule[]): CheckResult {
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
