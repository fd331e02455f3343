/** `--confirm-tool <pattern>`: a matching `tools/call` goes upstream only after the person approves it in the client's own dialog, which says in plain words what the call will do. */
import { createHash, randomBytes } from "node:crypto";
import * as z from "zod";
import { sanitizeForTerminal, truncateText } from "../../internal/redact.js";
import {
  ConfirmedPermissionsTaskSchema,
  ConfirmedStepsTaskSchema,
  IdSchema,
  OtherTaskSchema,
  type Permission,
} from "../../wire/index.js";
import type { BridgeLog } from "../log/log.js";
import {
  type StepOutcome,
  type ToolCallContext,
  type ToolCallStep,
  toolErrorResult,
  wildcardRegex,
} from "./index.js";

/** The key of the bridge's one elicitation in `inputRequests` / `inputResponses`. */
export const CONFIRM_INPUT_KEY = "chat-mcp-bridge/confirm";
/** Every `requestState` the bridge issues starts so; an upstream server's state never does. */
export const CONFIRM_STATE_PREFIX = "chat-mcp-bridge.confirm.";
/** How long the person has to answer (the dialog may wait while they read). */
export const DEFAULT_CONFIRM_TTL_MS = 10 * 60_000;
/** Confirmations waiting at once (and rounds of approved calls open at once); past it, the oldest is forgotten. */
export const DEFAULT_MAX_PENDING = 32;

export interface ConfirmToolStepOptions {
  /** `--confirm-tool` patterns, with the `--ignore-tool` wildcard rules. */
  patterns: readonly string[];
  /** Each decision (tool and decision, never argument values). */
  log: Pick<BridgeLog, "info">;
  now?: () => number;
  ttlMs?: number;
  maxPending?: number;
}

/** A confirmation not yet answered: the call as it came (sent unchanged once approved), and its canonical form. */
type PendingConfirmation = { params: ToolCallContext["params"]; fingerprint: string; expiresAt: number };

/** A round of input the server opened on an approved call: open until `expiresAt`, for `left` retries (usually one). */
type OpenRound = { expiresAt: number; left: number };

/** The approved call with the server's exact `requestState`, as a digest: the state may be megabytes. */
function roundKey(fingerprint: string, requestState: unknown): string {
  const state = typeof requestState === "string" ? requestState : null;
  return createHash("sha256")
    .update(JSON.stringify([fingerprint, state]))
    .digest("base64url");
}

/** Answers other than accept, as the spec names them (and a client's "deny"); anything else is logged as unreadable. */
const KNOWN_REFUSALS = new Set(["decline", "cancel", "deny"]);

/** An elicitation answer as a client sends it back (`ElicitResult`); anything else counts as no approval. */
const ConfirmAnswerSchema = z.looseObject({
  action: z.string(),
  content: z.record(z.string(), z.unknown()).nullish(),
});

/** The step: calls of tools no pattern matches pass untouched; matching ones are asked about first. */
export function createConfirmToolStep(options: ConfirmToolStepOptions): ToolCallStep {
  const patterns = options.patterns.map((pattern) => ({ pattern, regex: wildcardRegex(pattern) }));
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? DEFAULT_CONFIRM_TTL_MS;
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  const pending = new Map<string, PendingConfirmation>();
  /**
   * The rounds the server opened on approved calls: its `input_required` answer to one names a `requestState` (or
   * none), and only the retry of that very call with that very state continues it without a question, once.
   */
  const rounds = new Map<string, OpenRound>();
  const record = (tool: string, decision: string) => options.log.info(`--confirm-tool: ${tool}: ${decision}`);

  const forget = (time: number) => {
    for (const [state, entry] of pending) if (entry.expiresAt <= time) pending.delete(state);
    for (const [key, round] of rounds) if (round.expiresAt <= time) rounds.delete(key);
  };

  /** What follows an approved call once sent: an `input_required` answer of the server opens one round of it. */
  const followRounds =
    (fingerprint: string) =>
    (result: Record<string, unknown>): void => {
      if (result.resultType !== "input_required") return;
      const time = now();
      forget(time);
      const key = roundKey(fingerprint, result.requestState);
      const open = rounds.get(key);
      rounds.delete(key);
      while (rounds.size >= maxPending) rounds.delete(rounds.keys().next().value as string);
      rounds.set(key, { expiresAt: time + ttlMs, left: (open?.left ?? 0) + 1 });
    };

  /** The retry of a round the server opened on an approved call: true (and the round closed) when it is one. */
  const takeRound = (params: ToolCallContext["params"]): boolean => {
    // A round without a state is retried with its answers; a fresh call carries none.
    if (params.requestState === undefined && params.inputResponses === undefined) return false;
    forget(now());
    const key = roundKey(fingerprintOf(params), params.requestState);
    const round = rounds.get(key);
    if (!round) return false;
    if (--round.left <= 0) rounds.delete(key);
    return true;
  };

  /** Asks about `params` (the call as the client first made it), or refuses when the client cannot ask. */
  const ask = (
    params: ToolCallContext["params"],
    client: ToolCallContext["client"],
    flag: string,
  ): StepOutcome => {
    const name = shown(params.name);
    if (!canElicitForm(client.capabilities)) {
      record(name, "refused (the client cannot ask: no elicitation capability)");
      return toolError(
        `chat-mcp-bridge: the tool "${name}" needs the person's approval (--confirm-tool ${JSON.stringify(shown(flag))}), ` +
          "but this client did not declare the elicitation capability, so it cannot ask; the call was not sent to the server",
      );
    }
    const time = now();
    forget(time);
    while (pending.size >= maxPending) pending.delete(pending.keys().next().value as string);
    const state = `${CONFIRM_STATE_PREFIX}${randomBytes(18).toString("base64url")}`;
    pending.set(state, { params, fingerprint: fingerprintOf(params), expiresAt: time + ttlMs });
    record(name, "asked the person");
    return {
      kind: "input_required",
      result: {
        resultType: "input_required",
        inputRequests: {
          [CONFIRM_INPUT_KEY]: {
            method: "elicitation/create",
            params: confirmForm(params.name, params.arguments),
          },
        },
        requestState: state,
      },
    };
  };

  const settle = (call: ToolCallContext, state: string, flag: string): StepOutcome => {
    const name = shown(call.params.name);
    forget(now());
    const entry = pending.get(state);
    pending.delete(state);
    if (!entry) {
      record(name, "refused (unknown or expired confirmation)");
      return toolError(
        `chat-mcp-bridge: the confirmation of "${name}" is unknown or has expired (it lasts ${Math.round(ttlMs / 60_000)} min and is used once); ` +
          "the call was not sent to the server. Call the tool again to be asked anew",
      );
    }
    if (fingerprintOf(call.params) !== entry.fingerprint) {
      record(name, "refused (the retry differs from the call the person was asked about)");
      return toolError(
        `chat-mcp-bridge: the retried call of "${name}" is not the call the person was asked about; it was not sent to the server`,
      );
    }
    const response = call.params.inputResponses?.[CONFIRM_INPUT_KEY];
    // MRTR: a retry without the requested answer is asked again, not failed.
    if (response === undefined) return ask(entry.params, call.client, flag);
    const answer = ConfirmAnswerSchema.safeParse(response);
    if (answer.success && answer.data.action === "accept" && answer.data.content?.approve === true) {
      record(name, "approved by the person");
      // The call as first made (with any upstream server's own inputResponses/requestState), never the bridge's.
      const params = call.params._meta ? { ...entry.params, _meta: call.params._meta } : entry.params;
      return { kind: "forward", params, onResult: followRounds(entry.fingerprint) };
    }
    const action = answer.success ? answer.data.action : undefined;
    const how =
      action === "accept"
        ? "accepted without approve"
        : KNOWN_REFUSALS.has(action ?? "")
          ? action
          : "an unreadable answer";
    record(name, `denied (${how})`);
    return toolError(
      `chat-mcp-bridge: the call of "${name}" was denied by the user; it was not sent to the server`,
    );
  };

  return (call: ToolCallContext) => {
    const { name, requestState } = call.params;
    const matched = patterns.find(({ regex }) => regex.test(name));
    if (!matched) return { kind: "forward", params: call.params };
    if (call.notification === true) {
      record(shown(name), "dropped (sent as a notification, which cannot be confirmed)");
      return { kind: "drop" };
    }
    if (typeof requestState === "string" && requestState.startsWith(CONFIRM_STATE_PREFIX))
      return settle(call, requestState, matched.pattern);
    if (takeRound(call.params)) {
      record(shown(name), "continued (approved earlier; the server asked for more input)");
      return { kind: "forward", params: call.params, onResult: followRounds(fingerprintOf(call.params)) };
    }
    return ask(call.params, call.client, matched.pattern);
  };
}

/**
 * Which of `toolNames` (as the client sees them, after `--ignore-tool`/`--read-only`) the patterns put behind a
 * confirmation, for doctor (a pattern that matches none is judged in tool-rules-audit.ts, with the other rules).
 */
export function toolsToConfirm(patterns: readonly string[], toolNames: readonly string[]): string[] {
  const compiled = patterns.map((pattern) => wildcardRegex(pattern));
  return toolNames.filter((name) => compiled.some((regex) => regex.test(name)));
}

/** Form-mode elicitation: declared as `elicitation: {}` (form implied) or with `form`. */
function canElicitForm(capabilities: ToolCallContext["client"]["capabilities"] | undefined): boolean {
  const elicitation: unknown = capabilities?.elicitation;
  if (elicitation === null || typeof elicitation !== "object") return false;
  const modes = elicitation as { form?: unknown; url?: unknown };
  return modes.form !== undefined || modes.url === undefined;
}

/** The tool and its arguments with keys sorted, so a retry's key order does not matter. */
function fingerprintOf(params: ToolCallContext["params"]): string {
  return JSON.stringify([params.name, params.arguments ?? {}], (_key, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

/** A tool error answered by the bridge (`runToolCallSteps` adds `resultType` for a modern client). */
function toolError(text: string): StepOutcome {
  return { kind: "answer", result: toolErrorResult(text) };
}

/** Longest a single value (a message, a path, a name) is shown; the rest is cut and marked with `…`. */
export const MAX_SHOWN_VALUE = 200;
/** At most this many arguments, integrations or permissions are listed one by one; the rest are counted. */
export const MAX_SHOWN_ITEMS = 10;
/** The whole dialog text never exceeds this many characters. */
export const MAX_FORM_TEXT = 4_000;

/** The `elicitation/create` (form mode) parameters asking the person to approve one call. */
export interface ConfirmForm {
  mode: "form";
  message: string;
  requestedSchema: {
    type: "object";
    properties: { approve: { type: "boolean"; title: string; description: string; default: boolean } };
    required: ["approve"];
  };
}

/** The form for a call of `toolName` with `args`: plain words of what happens, then approve or deny. */
export function confirmForm(toolName: string, args: Record<string, unknown> | undefined): ConfirmForm {
  const name = shown(toolName);
  const lines = [
    `The assistant wants to call the tool "${name}" on the chat server.`,
    ...describeCall(toolName, args ?? {}),
    "",
    "Approve to send this call to the server; decline or cancel and nothing is sent.",
  ];
  return {
    mode: "form",
    message: truncateText(lines.join("\n"), MAX_FORM_TEXT),
    requestedSchema: {
      type: "object",
      properties: {
        approve: {
          type: "boolean",
          title: `Run ${name}`,
          description: "Leave this on and accept to let the call go through",
          default: true,
        },
      },
      required: ["approve"],
    },
  };
}

/** The lines that say what the call does: the seven known tools in words, any other tool by its arguments. */
export function describeCall(toolName: string, args: Record<string, unknown>): string[] {
  const chat = chatOf(args);
  switch (toolName) {
    case "resolve_task":
      return describeResolveTask(chat, args.task);
    case "create_chat":
      return ["It will start a new chat with this first message.", ...argumentLines(args)];
    case "send_message":
      return [`It will send this message to the chat ${chat}.`, ...argumentLines(args, ["chatId"])];
    case "list_chats":
      return ["It will read the list of your chats.", ...argumentLines(args)];
    case "get_chat":
      return [`It will read the chat ${chat}.`, ...argumentLines(args, ["chatId"])];
    case "list_messages":
      return [`It will read the messages of the chat ${chat}.`, ...argumentLines(args, ["chatId"])];
    case "get_preview":
      return [`It will get the preview link of the chat ${chat}.`, ...argumentLines(args, ["chatId"])];
    default:
      return ["With these arguments:", ...argumentLines(args)];
  }
}

/** `resolve_task`: the integrations and MCP presets it confirms, or the scripts whose permissions it approves. */
function describeResolveTask(chat: string, task: unknown): string[] {
  if (task === undefined)
    return [`It will resolve the pending request of the chat ${chat}; the server will then ask you how.`];
  const steps = ConfirmedStepsTaskSchema.safeParse(task);
  if (steps.success) {
    const integrations = steps.data.connectedIntegrationNames;
    const presets = steps.data.connectedMcpPresetNames ?? [];
    if (integrations.length === 0 && presets.length === 0)
      return [`It will reject the integration request of the chat ${chat} (nothing is connected).`];
    return [
      `It will confirm, in the chat ${chat}, that these are connected:`,
      ...namedList("integration", integrations),
      ...namedList("MCP preset", presets),
    ];
  }
  const permissions = ConfirmedPermissionsTaskSchema.safeParse(task);
  if (permissions.success) {
    const list = permissions.data.permissions;
    if (list.length === 0) return [`It will approve no permission in the chat ${chat} (an empty list).`];
    return [
      `It will approve these permissions in the chat ${chat}:`,
      ...bounded(list.map(describePermission)),
    ];
  }
  const other = OtherTaskSchema.safeParse(task);
  const kind = other.success ? ` of type "${shown(other.data.type)}"` : "";
  return [`It will send a task${kind} to the chat ${chat}:`, `- task: ${shownValue(task)}`];
}

/** One permission in words: a script it lets the assistant run, or its tool and input as sent. */
function describePermission(permission: Permission): string {
  const { systemAction, executeScript } = permission.input;
  if (systemAction === "executeScript" && typeof executeScript === "string")
    return `- run the script ${shown(executeScript)}`;
  return `- let the assistant use ${shown(permission.toolName)} with ${shownValue(permission.input)}`;
}

function namedList(what: string, names: readonly string[]): string[] {
  return bounded(names.map((name) => `- ${what}: ${shown(name)}`));
}

/** Each argument on its own line (`- key: value`), skipping those the sentence already names. */
function argumentLines(args: Record<string, unknown>, named: readonly string[] = []): string[] {
  const entries = Object.entries(args).filter(([key]) => !named.includes(key));
  if (entries.length === 0) return named.length > 0 ? [] : ["(no arguments)"];
  return bounded(entries.map(([key, value]) => `- ${shown(key)}: ${shownValue(value)}`));
}

/** At most MAX_SHOWN_ITEMS lines, then how many more there are. */
function bounded(lines: string[]): string[] {
  if (lines.length <= MAX_SHOWN_ITEMS) return lines;
  return [...lines.slice(0, MAX_SHOWN_ITEMS), `- … and ${lines.length - MAX_SHOWN_ITEMS} more`];
}

/** The chat a call names, shown; a missing or malformed id is said so rather than shown raw. */
function chatOf(args: Record<string, unknown>): string {
  if (args.chatId === undefined) return "(no chat named)";
  return IdSchema.safeParse(args.chatId).success ? shown(String(args.chatId)) : shownValue(args.chatId);
}

/** A value as the dialog shows it: strings quoted, anything else as JSON, shortened and made safe. */
function shownValue(value: unknown): string {
  if (typeof value === "string") return `"${shown(value)}"`;
  return shown(jsonPreview(value));
}

/** JSON of `value`, cut short without serialising more than a screenful of a huge value. */
function jsonPreview(value: unknown): string {
  let budget = MAX_SHOWN_VALUE * 4;
  const text = JSON.stringify(value, (_key, inner: unknown) => {
    if (budget <= 0) return undefined;
    if (typeof inner === "string") {
      budget -= Math.min(inner.length, MAX_SHOWN_VALUE);
      return inner.length > MAX_SHOWN_VALUE ? `${inner.slice(0, MAX_SHOWN_VALUE)}…` : inner;
    }
    budget -= 1;
    return inner;
  });
  return text ?? String(value);
}

/**
 * Outside text made safe and short: cut to MAX_SHOWN_VALUE code points (a 1 MB string never reaches the
 * sanitiser whole), then every control, bidi and line-separator character shown instead of acted on.
 */
export function shown(text: string): string {
  const head = text.length > MAX_SHOWN_VALUE * 2 ? `${text.slice(0, MAX_SHOWN_VALUE * 2)}…` : text;
  return sanitizeForTerminal(truncateText(head, MAX_SHOWN_VALUE), { oneLine: true });
}
