/** The `--confirm-tool` dialog: what a tool call will do, in plain words from its arguments, shortened and made safe to show. */
import { sanitizeForTerminal, truncateText } from "../../internal/redact.js";
import {
  ConfirmedPermissionsTaskSchema,
  ConfirmedStepsTaskSchema,
  IdSchema,
  OtherTaskSchema,
  type Permission,
} from "../../wire/index.js";

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
