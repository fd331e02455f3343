/** The one place results become output: tables and summaries on a TTY, stable plain text off it, JSON with --json.
 * Every string from the server crosses `shown` first, so no title or message can drive the terminal.
 */
import { sanitizeForTerminal, truncateText } from "../internal/redact.js";
import {
  type Chat,
  IdSchema,
  type Message,
  type PendingTask,
  type Permission,
  type Preview,
} from "../wire/index.js";
import { type CliIo, createStyle, stripAnsi } from "./io.js";

/** `value` with every string in it (deep) made safe for a terminal: control characters shown as `^[`, `^M`, ... */
export function shown<T>(value: T): T {
  if (typeof value === "string") return sanitizeForTerminal(value) as T;
  if (Array.isArray(value)) return value.map(shown) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shown(item)])) as T;
  }
  return value;
}

// JSON.stringify escapes C0 controls but not DEL, C1 controls or bidi overrides; `\uXXXX` keeps the JSON equal.
const UNESCAPED_BY_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** `--json`: exactly the response object, nothing else on stdout. */
export function printJson(io: CliIo, value: unknown): void {
  const json = JSON.stringify(value, null, 2).replace(
    UNESCAPED_BY_JSON,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  io.stdout(`${json}\n`);
}

/** A hint or progress line on stderr (dimmed on a colour terminal); server text in it is made safe, and one line. */
export function printHint(io: CliIo, text: string): void {
  io.stderr(`${createStyle(io.errColor).dim(sanitizeForTerminal(text, { oneLine: true }))}\n`);
}

/**
 * A value (a chat id, say) as it may be pasted into a shell from a copy-paste hint: as it is when it has the wire's
 * id format, single-quoted when it is printable text, and `placeholder` when it holds a control character, a line
 * separator or a bidi mark (quoting cannot make what a terminal shows equal to what a shell would run).
 */
export function hintArgument(value: string, placeholder = "<chatId>"): string {
  if (IdSchema.safeParse(value).success) return value;
  if (value === "" || sanitizeForTerminal(value, { oneLine: true }) !== value) return placeholder;
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** A value the service may leave out (or null) prints as an empty cell. */
type Row = [label: string, value: string | null | undefined];

/** Label/value rows: aligned with bold labels on a TTY, `label:<TAB>value` lines off it. */
export function printRows(io: CliIo, rows: Row[]): void {
  if (!io.isTTY) {
    io.stdout(rows.map(([label, value]) => `${label}:\t${oneLine(value ?? "")}\n`).join(""));
    return;
  }
  const style = createStyle(io.color);
  const width = Math.max(...rows.map(([label]) => label.length)) + 1;
  io.stdout(
    rows
      .map(
        ([label, value]) =>
          `${style.bold(`${label}:`)}${" ".repeat(width - label.length)} ${oneLine(value ?? "")}\n`,
      )
      .join(""),
  );
}

/** Columns padded to fit on a TTY (the last one truncated to the terminal), tab-separated off it. */
function printTable(
  io: CliIo,
  headers: string[],
  rows: Array<Array<string | null | undefined>>,
  columns = 100,
): void {
  const cells = rows.map((row) => row.map((cell) => oneLine(cell ?? "")));
  if (!io.isTTY) {
    io.stdout(cells.map((row) => `${row.join("\t")}\n`).join(""));
    return;
  }
  const style = createStyle(io.color);
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...cells.map((row) => stripAnsi(row[i] ?? "").length)),
  );
  const fixed = widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0);
  const last = Math.max(10, columns - fixed);
  const line = (row: string[], paint: (s: string) => string) =>
    row
      .map((cell, i) => {
        if (i === row.length - 1) return paint(truncateText(cell, last));
        return paint(cell) + " ".repeat((widths[i] ?? 0) - stripAnsi(cell).length + 2);
      })
      .join("")
      .trimEnd();
  io.stdout(`${line(headers, style.bold)}\n`);
  for (const row of cells) io.stdout(`${line(row, (s) => s)}\n`);
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").replace(/\t/g, " ");
}

function columnsOf(io: CliIo): number {
  // A pseudo-terminal without a window size reports 0 columns.
  return (io as CliIo & { columns?: number }).columns || process.stdout.columns || 100;
}

/** One pending task as rows: what the latest assistant message waits for. */
function pendingRows(pending: PendingTask | null): Row[] {
  if (!pending) return [["pending", "nothing"]];
  if (pending.kind === "integration") {
    return [
      ["pending", "integration"],
      ["integrations", pending.integrations.join(", ") || "none"],
      ["mcp presets", pending.mcpPresets.join(", ") || "none"],
      ["message", pending.message.id],
    ];
  }
  return [
    ["pending", "permissions"],
    ...pending.permissions.map((permission): Row => ["script", describePermission(permission)]),
    ["message", pending.message.id],
  ];
}

/** `/scripts/setup-db.sql (SystemAction executeScript)` for a script permission, else its JSON. */
export function describePermission(permission: Permission): string {
  const script = permission.input.executeScript;
  if (script) return `${script} (${permission.toolName} ${permission.input.systemAction ?? ""})`.trim();
  return JSON.stringify(permission);
}

/** What an integration request asks for: `Neon and MCP preset Linear`, `MCP preset Linear`, `Neon`. */
export function requestedNames(
  pending: Pick<PendingTask & { kind: "integration" }, "integrations" | "mcpPresets">,
): string {
  const wanted = [
    ...(pending.integrations.length > 0 ? [pending.integrations.join(", ")] : []),
    ...(pending.mcpPresets.length > 0
      ? [`MCP preset${pending.mcpPresets.length > 1 ? "s" : ""} ${pending.mcpPresets.join(", ")}`]
      : []),
  ];
  return wanted.join(" and ") || "nothing";
}

/** A short one-phrase summary of a pending task. */
export function pendingSummary(pending: PendingTask | null): string {
  if (!pending) return "nothing";
  if (pending.kind === "integration") return `integration: ${requestedNames(pending)}`;
  const scripts = pending.permissions.map((p) => p.input.executeScript ?? p.toolName);
  return `permission to run ${scripts.join(", ")}`;
}

/** `get`/`create`: the chat's identity, URL, hosting project and what it waits for. */
export function printChat(io: CliIo, rawChat: Chat, rawPending: PendingTask | null): void {
  const chat = shown(rawChat);
  const pending = shown(rawPending);
  const style = createStyle(io.color);
  const rows: Row[] = [
    ["title", io.isTTY && chat.title ? style.bold(chat.title) : chat.title],
    ["id", chat.id],
    ["url", io.isTTY && chat.url ? style.cyan(chat.url) : chat.url],
    ["hostProjectId", chat.hostProjectId ?? (io.isTTY ? style.yellow("none") : "")],
    ["created", chat.createdAt],
    ["updated", chat.updatedAt],
    ["pending", io.isTTY && pending ? style.yellow(pendingSummary(pending)) : pendingSummary(pending)],
  ];
  printRows(io, rows);
}

/** `list`: one row per chat. */
export function printChatList(io: CliIo, chats: readonly Chat[]): void {
  printTable(
    io,
    ["ID", "UPDATED", "TITLE"],
    shown(chats).map((chat) => [chat.id, chat.updatedAt, chat.title]),
    columnsOf(io),
  );
}

/** `messages`: one row per message, newest first as the service returns them. */
export function printMessageList(io: CliIo, messages: readonly Message[]): void {
  const style = createStyle(io.color);
  printTable(
    io,
    ["ID", "ROLE", "FINISH", "CREATED", "CONTENT"],
    shown(messages).map((m) => [
      m.id,
      m.role,
      io.isTTY && m.finishReason === "tool-calls" ? style.yellow("tool-calls") : (m.finishReason ?? ""),
      m.createdAt,
      m.content,
    ]),
    columnsOf(io),
  );
}

/** `message`, `send`, `resolve`: one message with its content and anything it asks for. */
export function printMessage(io: CliIo, rawMessage: Message, rawPending: PendingTask | null): void {
  const message = shown(rawMessage);
  const pending = shown(rawPending);
  const rows: Row[] = [
    ["id", message.id],
    ["chat", message.chatId],
    ["role", message.role],
    ["finish", message.finishReason ?? ""],
    ["created", message.createdAt],
    ["parts", message.parts.map((part) => part.type).join(", ")],
  ];
  if (pending) rows.push(...pendingRows(pending).filter(([label]) => label !== "message"));
  printRows(io, rows);
  const content = message.content ?? "";
  io.stdout(io.isTTY ? `\n${content}\n` : `content:\t${oneLine(content)}\n`);
}

/** `pending`: what the latest assistant message waits for, and whether the chat can go on with it. */
export function printPending(io: CliIo, rawChat: Chat, rawPending: PendingTask | null): void {
  const chat = shown(rawChat);
  const pending = shown(rawPending);
  const style = createStyle(io.color);
  const none = "none: the integration flow cannot proceed";
  const hostProject = chat.hostProjectId ?? (io.isTTY ? style.yellow(none) : none);
  printRows(io, [["chat", chat.id], ["hostProjectId", hostProject], ...pendingRows(pending)]);
}

/** `preview`: the preview URL alone, so `$(chat-cli preview id)` is the URL. */
export function printPreview(io: CliIo, preview: Preview): void {
  io.stdout(`${sanitizeForTerminal(preview.url, { oneLine: true })}\n`);
}

/** The next step for a paused chat, on stderr. */
export function printNextStep(
  io: CliIo,
  chat: Pick<Chat, "id" | "hostProjectId">,
  pending: PendingTask | null,
): void {
  for (const line of nextStepLines(chat, pending)) printHint(io, line);
}

export function nextStepLines(
  chat: Pick<Chat, "id" | "hostProjectId">,
  pending: PendingTask | null,
): string[] {
  if (!pending) return [];
  const id = hintArgument(chat.id);
  if (pending.kind === "integration") {
    if (!chat.hostProjectId) {
      return [
        `Chat ${chat.id} has no hostProjectId: the integration flow cannot proceed (link a hosting project to the account or team).`,
        `Reject the request with: chat-cli resolve ${id} --reject`,
      ];
    }
    return [
      `Connect ${requestedNames(pending)} to host project ${chat.hostProjectId}, then run: chat-cli resolve ${id} --connected`,
      `Or reject it with: chat-cli resolve ${id} --reject`,
    ];
  }
  return [
    `Approve with: chat-cli resolve ${id} --approve`,
    `Or reject it by sending a follow-up message: chat-cli send ${id} <text>`,
  ];
}
