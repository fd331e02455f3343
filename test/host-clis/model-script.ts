/**
 * The scripted model's mind, free of any wire format: given the tools a host offered and the tool results it sent
 * back so far, the next tool call or the final answer. Plays the seed flow (create, read the pause, read the
 * hosting project, confirm the integrations, confirm the permissions, get the preview), one call, or a sign-in.
 */
import { type Message, pendingTaskOf } from "../../src/wire/index.js";

/** What the user asked for: a token in the prompt picks the script. */
export type Scenario = "seed" | "create" | "list";

export const SEED_PROMPT = "Set up a database for my app";

/** A tool call the model made, and the text the host sent back for it (when it has). */
export interface Turn {
  name: string;
  args: Record<string, unknown>;
  result?: string;
}

export type Move =
  | { kind: "call"; name: string; args: Record<string, unknown> }
  | { kind: "answer"; text: string }
  /** A search of the host's deferred tools (the Responses API's `tool_search`), as a model does when none is loaded. */
  | { kind: "search"; query: string };

/** What the model searches for when the host defers its servers' tools behind a search tool. */
export const TOOL_QUERY = "chat";

/**
 * The offered tool that is the bridge's `name`: every host prefixes a server's tools with the server's name, here
 * `chat` (`mcp__chat__create_chat`, `mcp_chat_...`, `chat_...`, `chat-...`); a host's own `send_message` is not it.
 */
export function toolNamed(offered: readonly string[], name: string): string | undefined {
  return offered.find((tool) => new RegExp(`(^|_)chat[_.:/-]+${name}$`).test(tool));
}

export function scenarioOf(prompt: string): Scenario {
  if (prompt.includes("SCENARIO:create")) return "create";
  if (prompt.includes("SCENARIO:list")) return "list";
  return "seed";
}

/**
 * The JSON documents in a text, wherever they stand: hosts wrap the bridge's text (Gemini CLI's
 * `<untrusted_context>`) or put its text and its structuredContent side by side with prose (Copilot CLI).
 */
function jsonDocuments(text: string): unknown[] {
  const docs: unknown[] = [];
  let depth = 0;
  let start = -1;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"' && depth > 0) quoted = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if ((c === "}" || c === "]") && depth > 0 && --depth === 0) {
      try {
        docs.push(JSON.parse(text.slice(start, i + 1)));
      } catch {}
    }
  }
  return docs;
}

/** Every JSON object found in a tool result's text (hosts wrap the bridge's text in their own JSON or prose). */
function objectsIn(text: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === "string") for (const doc of jsonDocuments(value)) visit(doc);
    else if (Array.isArray(value)) for (const item of value) visit(item);
    else if (value && typeof value === "object") {
      found.push(value as Record<string, unknown>);
      for (const item of Object.values(value)) visit(item);
    }
  };
  visit(text);
  return found;
}

const find = <T>(
  turn: Turn | undefined,
  pick: (o: Record<string, unknown>) => T | undefined,
): T | undefined => {
  for (const object of objectsIn(turn?.result ?? "")) {
    const value = pick(object);
    if (value !== undefined) return value;
  }
  return undefined;
};

const isMessage = (o: Record<string, unknown>): o is Message & Record<string, unknown> =>
  o.role === "assistant" && Array.isArray(o.parts);

/** True when the host's text for a call reads as a failure (an MCP `isError`, a host's own error wording). */
export function looksFailed(result: string): boolean {
  return /"isError"\s*:\s*true|^(error|MCP error|Error:)|tool .* (failed|error)/i.test(result.trim());
}

/**
 * The next move. `offered` are the host's tool names (those a search found among them); `turns` the chat tools
 * called so far with their results; `canSearch` when the host offers a search of its deferred tools not yet used.
 * A failed result ends the script with an answer quoting it, so the host shows it to the user.
 */
export function nextMove(
  scenario: Scenario,
  offered: readonly string[],
  turns: readonly Turn[],
  canSearch = false,
): Move {
  const call = (name: string, args: Record<string, unknown>): Move => {
    const tool = toolNamed(offered, name);
    return tool
      ? { kind: "call", name: tool, args }
      : { kind: "answer", text: `SCRIPT: no ${name} tool among the ${offered.length} offered` };
  };
  const last = turns.at(-1);
  if (last?.result !== undefined && looksFailed(last.result))
    return { kind: "answer", text: `SCRIPT: ${last.name} failed: ${last.result}` };

  // Signed out, or refused: the bridge's one tool that says where to sign in, or what is wrong with its config.
  const lone = toolNamed(offered, "sign_in") ?? toolNamed(offered, "chat_mcp_bridge_error");
  if (!toolNamed(offered, "create_chat") && !toolNamed(offered, "list_chats")) {
    if (lone && !turns.some((turn) => turn.name === lone)) return { kind: "call", name: lone, args: {} };
    if (last) return { kind: "answer", text: `SCRIPT: ${last.name}: ${last.result ?? "(no result)"}` };
    if (!lone && canSearch) return { kind: "search", query: TOOL_QUERY };
    return { kind: "answer", text: `SCRIPT: no chat tools (offered: ${offered.join(", ") || "none"})` };
  }

  const step = turns.length;
  if (scenario === "list") {
    if (step === 0) return call("list_chats", {});
    return { kind: "answer", text: `SCRIPT: listed: ${last?.result?.slice(0, 200)}` };
  }
  if (step === 0) return call("create_chat", { message: SEED_PROMPT });
  const chatId = find(turns[0], (o) => (typeof o.id === "string" && "title" in o ? o.id : undefined));
  if (!chatId) return { kind: "answer", text: `SCRIPT: no chat id in ${turns[0]?.result}` };
  if (scenario === "create") return { kind: "answer", text: `SCRIPT: created chat ${chatId}` };

  switch (step) {
    case 1:
      return call("list_messages", { chatId, limit: 5 });
    case 2:
      return call("get_chat", { chatId });
    case 3: {
      const pending = pendingTaskOf(find(turns[1], (o) => (isMessage(o) ? o : undefined)));
      const project = find(turns[2], (o) =>
        typeof o.hostProjectId === "string" ? o.hostProjectId : undefined,
      );
      if (pending?.kind !== "integration" || !project)
        return { kind: "answer", text: `SCRIPT: no integration pause or hostProjectId (${pending?.kind})` };
      const task: Record<string, unknown> = {
        type: "confirmed-steps",
        connectedIntegrationNames: pending.integrations,
      };
      if (pending.mcpPresets.length) task.connectedMcpPresetNames = pending.mcpPresets;
      return call("resolve_task", { chatId, task });
    }
    case 4: {
      const pending = pendingTaskOf(find(turns[3], (o) => (isMessage(o) ? o : undefined)));
      if (pending?.kind !== "permissions")
        return { kind: "answer", text: `SCRIPT: no permission pause (${pending?.kind})` };
      return call("resolve_task", {
        chatId,
        task: { type: "confirmed-permissions", permissions: pending.permissions },
      });
    }
    case 5:
      return call("get_preview", { chatId });
    default: {
      const url = find(last, (o) => (typeof o.url === "string" ? o.url : undefined));
      return { kind: "answer", text: `SCRIPT: seed flow done, ${turns.length} tool results, preview ${url}` };
    }
  }
}
