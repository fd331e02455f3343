/** Safety rules (`--confirm-tool`, `--ignore-tool`, `--read-only`) that match no tool the server lists: each a warning the person sees, with the closest name. */
import { closestName } from "../../internal/closest-name.js";
import { sanitizeForTerminal, truncateText } from "../../internal/redact.js";
import type { BridgeLog } from "../log/log.js";
import { isJsonObject as isObject } from "../messages/jsonrpc.js";
import type { ClientContext, ToClient } from "../messages/request-model.js";
import { wildcardRegex } from "./index.js";

/** The rules as the command line gives them. */
export interface ToolRules {
  confirmTools?: readonly string[];
  ignoreTools?: readonly string[];
  readOnly?: boolean;
}

/** A tool as a `tools/list` answer names it: what the rules read. */
export interface ListedTool {
  name: string;
  readOnly: boolean;
  /** Offered to its MCP App only (`_meta.ui.visibility` without `"model"`): the App calls it, the model never sees it. */
  appOnly?: boolean;
}

/** A rule that matched no listed tool, and what the person reads about it. */
export interface UnmatchedRule {
  flag: "--confirm-tool" | "--ignore-tool" | "--read-only";
  /** The pattern as given (none for `--read-only`). */
  pattern?: string;
  /** The listed name nearest the pattern, when one is near (a typo). */
  closest?: string;
  /** One sentence: the rule, what matching nothing means, and the name meant or the names listed. */
  warning: string;
}

/** Listed names shown in a warning when none is near the pattern; the rest are counted. */
const MAX_NAMES_SHOWN = 10;
/** Tools remembered across the pages of one list before the rules are judged on what came so far. */
const MAX_TOOLS_SEEN = 10_000;
/** The MCP log levels above `warning`: a client that asked for one of them is not sent these warnings. */
const ABOVE_WARNING = new Set<string>(["error", "critical", "alert", "emergency"]);

/** The tools of a `tools/list` result (a tool without a string name left out), or undefined when it holds no list. */
export function listedTools(result: unknown): ListedTool[] | undefined {
  const tools = isObject(result) ? result.tools : undefined;
  if (!Array.isArray(tools)) return undefined;
  return tools.flatMap((tool: unknown) =>
    isObject(tool) && typeof tool.name === "string"
      ? [
          {
            name: tool.name,
            readOnly: isObject(tool.annotations) && tool.annotations.readOnlyHint === true,
            appOnly: isAppOnly(tool._meta),
          },
        ]
      : [],
  );
}

function isAppOnly(meta: unknown): boolean {
  const ui = isObject(meta) ? meta.ui : undefined;
  const visibility = isObject(ui) ? ui.visibility : undefined;
  return Array.isArray(visibility) && visibility.includes("app") && !visibility.includes("model");
}

/** The rules that match none of `tools`: each `--confirm-tool`, then each `--ignore-tool`, then `--read-only`. */
export function unmatchedToolRules(rules: ToolRules, tools: readonly ListedTool[]): UnmatchedRule[] {
  const names = tools.map((tool) => tool.name);
  const unmatched: UnmatchedRule[] = [];
  const reportUnmatched = (flag: "--confirm-tool" | "--ignore-tool", pattern: string, meaning: string) => {
    const regex = wildcardRegex(pattern);
    if (names.some((name) => regex.test(name))) return;
    const closest = closestName(pattern, names);
    const named = closest ? `did you mean ${shownName(closest)}?` : listedNames(names);
    unmatched.push({
      flag,
      pattern,
      ...(closest ? { closest } : {}),
      warning: `${flag} ${JSON.stringify(shownName(pattern))} matches no tool the server lists, so ${meaning}; ${named}`,
    });
  };
  for (const pattern of rules.confirmTools ?? [])
    reportUnmatched("--confirm-tool", pattern, "it asks about nothing: the tool meant runs without asking");
  for (const pattern of rules.ignoreTools ?? [])
    reportUnmatched("--ignore-tool", pattern, "it hides nothing");
  if (rules.readOnly === true && !tools.some((tool) => tool.readOnly))
    unmatched.push({
      flag: "--read-only",
      warning: `--read-only: the server annotates no tool readOnlyHint: true, so every tool is hidden; ${listedNames(names)}`,
    });
  const appOnlyHidden = rules.readOnly === true ? tools.filter((tool) => tool.appOnly && !tool.readOnly) : [];
  if (appOnlyHidden.length > 0)
    unmatched.push({
      flag: "--read-only",
      warning:
        `--read-only also hides the tools only MCP Apps call (${appOnlyHidden.map((tool) => shownName(tool.name)).join(", ")}): ` +
        "not annotated readOnlyHint: true, they may write, so an App that calls them shows but cannot act",
    });
  return unmatched;
}

/**
 * Judges the rules once per bridge process, at the first complete `tools/list` answer from upstream (a page
 * without `nextCursor`, with the pages before it), and hands each unmatched rule to `warn`; later lists change
 * nothing (the person was told once).
 */
export class ToolRulesAudit {
  readonly #rules: ToolRules;
  readonly #warn: (rule: UnmatchedRule, client: ClientContext) => void;
  #seen: ListedTool[] = [];
  #judged = false;

  constructor(rules: ToolRules, warn: (rule: UnmatchedRule, client: ClientContext) => void) {
    this.#rules = rules;
    this.#warn = warn;
  }

  /** A `tools/list` result from upstream, answering a request of `client`. */
  observe(result: unknown, client: ClientContext): void {
    if (this.#judged) return;
    const tools = listedTools(result);
    if (!tools) return;
    this.#seen.push(...tools.slice(0, MAX_TOOLS_SEEN - this.#seen.length));
    const morePages = isObject(result) && typeof result.nextCursor === "string";
    if (morePages && this.#seen.length < MAX_TOOLS_SEEN) return;
    this.#judged = true;
    const seen = this.#seen;
    this.#seen = [];
    for (const rule of unmatchedToolRules(this.#rules, seen)) this.#warn(rule, client);
  }
}

/** What a relay calls with each `tools/list` result from upstream, before the client sees it. */
export type ToolsListed = (result: unknown, client: ClientContext) => void;

/**
 * The audit of one bridge process, or undefined without rules: each unmatched rule on stderr and in the log, and
 * to the host as a `notifications/message` warning (written before the list answer that revealed it).
 */
export function toolRulesWarnings(
  rules: ToolRules,
  log: Pick<BridgeLog, "info">,
  toClient: ToClient,
): ToolsListed | undefined {
  if (!rules.confirmTools?.length && !rules.ignoreTools?.length && rules.readOnly !== true) return undefined;
  const audit = new ToolRulesAudit(rules, (rule, client) => {
    log.info(rule.warning);
    if (wantsWarnings(client))
      toClient({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "warning", logger: "chat-mcp-bridge", data: rule.warning },
      });
  });
  return (result, client) => audit.observe(result, client);
}

/**
 * Only a client that asked for log messages at `warning` or below gets the warning as one: some hosts fail on a
 * notification they did not ask for (the Vercel AI SDK); the log and stderr always have it.
 */
function wantsWarnings(client: ClientContext): boolean {
  return client.logLevel !== undefined && !ABOVE_WARNING.has(client.logLevel);
}

function listedNames(names: readonly string[]): string {
  if (names.length === 0) return "the server lists no tools";
  const shown = names.slice(0, MAX_NAMES_SHOWN).map(shownName).join(", ");
  return names.length > MAX_NAMES_SHOWN
    ? `the server lists ${shown} and ${names.length - MAX_NAMES_SHOWN} more`
    : `the server lists ${shown}`;
}

/** A name from the server or the command line, short and with no character that acts on a terminal. */
function shownName(name: string): string {
  return sanitizeForTerminal(truncateText(name, 100), { oneLine: true });
}
