/**
 * A scripted model API on 127.0.0.1 for the coding CLIs: Anthropic Messages, Gemini generateContent, OpenAI
 * Responses and Chat Completions (streamed as each host asks), one small adapter per wire format around
 * model-script.ts. Every request is recorded: the tools the host offered and the tool results it sent back.
 */
import { appendFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Move, nextMove, scenarioOf, type Turn, toolNamed } from "./model-script.js";

export type Wire = "anthropic" | "gemini" | "responses" | "chat";

/** The bridge's tool names, to tell its tools from a host's own among those offered. */
const BRIDGE_TOOLS = [
  "create_chat",
  "list_chats",
  "get_chat",
  "send_message",
  "list_messages",
  "resolve_task",
  "get_preview",
  "sign_in",
  "chat_mcp_bridge_error",
];

export interface RecordedRequest {
  wire: Wire;
  path: string;
  /** Every tool name the host offered. */
  offered: string[];
  /** Those that are the bridge's (by suffix). */
  bridgeTools: string[];
  turns: Turn[];
  prompt: string;
  move?: Move;
  at: number;
}

export interface ModelApi {
  url: string;
  requests: RecordedRequest[];
  /** The requests that offered tools (a host's agent turns, not its title or routing side requests). */
  agentTurns(): RecordedRequest[];
  /**
   * The bridge's tools within the model's reach in its first turn: those the first agent request offered, or, when
   * the model searched the host's deferred tools there, those the host's answer to that search carried.
   */
  firstReach(): string[] | undefined;
  /** The text of the last answer the model gave (what the host should print). */
  lastAnswer(): string | undefined;
  close(): Promise<void>;
}

interface Parsed {
  prompt: string;
  offered: string[];
  turns: Turn[];
  stream: boolean;
  /** A side request asking for JSON (Gemini CLI's next-speaker check and router). */
  wantsJson?: boolean;
  /** The host offers a search of its deferred tools (the Responses API's `tool_search`), not used yet. */
  canSearch?: boolean;
  /** Offered tools that sit in a namespace: the full name the script uses, and the two parts a call names. */
  namespaced?: Map<string, { namespace: string; name: string }>;
}

export type Json = Record<string, unknown>;
const arr = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
const str = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value ?? ""));
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : arr(content)
        .map((part) => (typeof part.text === "string" ? part.text : ""))
        .join("\n");
const parseArgs = (raw: unknown): Json => {
  if (raw && typeof raw === "object") return raw as Json;
  try {
    return JSON.parse(String(raw || "{}")) as Json;
  } catch {
    return {};
  }
};

/** Attaches a result to the earliest call with that id (or, with no id, that name) still waiting for one. */
function settle(
  turns: (Turn & { id?: string })[],
  id: string | undefined,
  name: string | undefined,
  result: string,
) {
  const turn =
    turns.find((t) => t.result === undefined && id !== undefined && t.id === id) ??
    turns.find((t) => t.result === undefined && (name === undefined || t.name === name));
  if (turn) turn.result = result;
}

/** The one name the script knows a namespaced tool by (the Responses API sends the two parts apart). */
const inNamespace = (namespace: string, name: string) => `${namespace}.${name}`;

const parsers: Record<Wire, (body: Json) => Parsed> = {
  anthropic(body) {
    const turns: (Turn & { id?: string })[] = [];
    let prompt = "";
    for (const message of arr(body.messages)) {
      if (typeof message.content === "string") {
        if (message.role === "user") prompt += `${message.content}\n`;
        continue;
      }
      for (const block of arr(message.content)) {
        if (block.type === "text" && message.role === "user") prompt += `${block.text}\n`;
        if (block.type === "tool_use")
          turns.push({ id: str(block.id), name: str(block.name), args: parseArgs(block.input) });
        if (block.type === "tool_result")
          settle(turns, str(block.tool_use_id), undefined, textOf(block.content));
      }
    }
    return { prompt, turns, offered: arr(body.tools).map((t) => str(t.name)), stream: body.stream === true };
  },
  gemini(body) {
    const turns: Turn[] = [];
    let prompt = "";
    for (const content of arr(body.contents)) {
      for (const part of arr(content.parts)) {
        if (typeof part.text === "string" && content.role === "user") prompt += `${part.text}\n`;
        const call = part.functionCall as Json | undefined;
        if (call) turns.push({ name: str(call.name), args: parseArgs(call.args) });
        const response = part.functionResponse as Json | undefined;
        if (response) settle(turns, undefined, str(response.name), JSON.stringify(response.response ?? {}));
      }
    }
    const offered = arr(body.tools).flatMap((tool) => arr(tool.functionDeclarations).map((f) => str(f.name)));
    const config = (body.generationConfig ?? body.config ?? {}) as Json;
    return {
      prompt,
      turns,
      offered,
      stream: false,
      wantsJson: config.responseMimeType === "application/json",
    };
  },
  responses(body) {
    const turns: (Turn & { id?: string })[] = [];
    const namespaced = new Map<string, { namespace: string; name: string }>();
    /** A tool list's names, a namespace's tools as `<namespace>.<name>` (Codex: `mcp__chat` and `list_chats`). */
    const namesOf = (tools: unknown): string[] =>
      arr(tools).flatMap((tool) =>
        tool.type === "namespace"
          ? arr(tool.tools).map((t) => {
              const full = inNamespace(str(tool.name), str(t.name));
              namespaced.set(full, { namespace: str(tool.name), name: str(t.name) });
              return full;
            })
          : [typeof tool.name === "string" ? tool.name : str(tool.type)],
      );
    const offered = namesOf(body.tools);
    let searched = false;
    let prompt = typeof body.input === "string" ? body.input : "";
    for (const item of arr(body.input)) {
      if ((item.type === "message" || item.role) && item.role === "user")
        prompt += `${textOf(item.content)}\n`;
      if (item.type === "function_call")
        turns.push({
          id: str(item.call_id),
          name:
            typeof item.namespace === "string" ? inNamespace(item.namespace, str(item.name)) : str(item.name),
          args: parseArgs(item.arguments),
        });
      if (item.type === "function_call_output")
        settle(
          turns,
          str(item.call_id),
          undefined,
          typeof item.output === "string" ? item.output : textOf(item.output),
        );
      // The model's search of the deferred tools, and what the host found: those tools are offered from then on.
      if (item.type === "tool_search_call") searched = true;
      if (item.type === "tool_search_output") offered.push(...namesOf(item.tools));
    }
    const canSearch = !searched && arr(body.tools).some((tool) => tool.type === "tool_search");
    return { prompt, turns, offered, stream: body.stream === true, canSearch, namespaced };
  },
  chat(body) {
    const turns: (Turn & { id?: string })[] = [];
    let prompt = "";
    for (const message of arr(body.messages)) {
      if (message.role === "user") prompt += `${textOf(message.content)}\n`;
      for (const call of arr(message.tool_calls)) {
        const fn = (call.function ?? {}) as Json;
        turns.push({ id: str(call.id), name: str(fn.name), args: parseArgs(fn.arguments) });
      }
      if (message.role === "tool")
        settle(turns, str(message.tool_call_id), undefined, textOf(message.content));
    }
    const offered = arr(body.tools).map((tool) =>
      str((tool.function as Json | undefined)?.name ?? tool.name),
    );
    return { prompt, turns, offered, stream: body.stream === true };
  },
};

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

function sse(res: ServerResponse, events: (Json | string)[], named = false): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const event of events) {
    if (typeof event === "string") res.write(`data: ${event}\n\n`);
    else res.write(`${named ? `event: ${event.type}\n` : ""}data: ${JSON.stringify(event)}\n\n`);
  }
  res.end();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const usage = { input_tokens: 100, output_tokens: 20 };

/** A move a wire with no tool search can carry. */
type Said = Exclude<Move, { kind: "search" }>;
type Renderer<M> = (res: ServerResponse, move: M, parsed: Parsed, model: string) => void;

const renderers: { [W in Wire]: Renderer<W extends "responses" ? Move : Said> } = {
  anthropic(res, move, parsed, model) {
    const id = nextId("msg");
    const block =
      move.kind === "call"
        ? { type: "tool_use", id: nextId("toolu"), name: move.name, input: move.args }
        : { type: "text", text: move.text };
    const stop_reason = move.kind === "call" ? "tool_use" : "end_turn";
    if (!parsed.stream)
      return json(res, 200, {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [block],
        stop_reason,
        stop_sequence: null,
        usage,
      });
    const start = move.kind === "call" ? { ...block, input: {} } : { type: "text", text: "" };
    const delta =
      move.kind === "call"
        ? { type: "input_json_delta", partial_json: JSON.stringify(move.args) }
        : { type: "text_delta", text: move.text };
    sse(
      res,
      [
        {
          type: "message_start",
          message: {
            id,
            type: "message",
            role: "assistant",
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { ...usage, output_tokens: 1 },
          },
        },
        { type: "content_block_start", index: 0, content_block: start },
        { type: "content_block_delta", index: 0, delta },
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 20 } },
        { type: "message_stop" },
      ],
      true,
    );
  },
  gemini(res, move, parsed) {
    const part =
      move.kind === "call"
        ? { functionCall: { name: move.name, args: move.args } }
        : {
            text: parsed.wantsJson
              ? JSON.stringify({ reasoning: "scripted", next_speaker: "user", model_choice: "flash" })
              : move.text,
          };
    const body = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 },
      modelVersion: "scripted",
    };
    if (res.req.url?.includes("streamGenerateContent")) sse(res, [body]);
    else json(res, 200, body);
  },
  responses(res, move, parsed, model) {
    const id = nextId("resp");
    const item =
      move.kind === "call"
        ? {
            type: "function_call",
            id: nextId("fc"),
            call_id: nextId("call"),
            ...(parsed.namespaced?.get(move.name) ?? { name: move.name }),
            arguments: JSON.stringify(move.args),
            status: "completed",
          }
        : move.kind === "search"
          ? {
              type: "tool_search_call",
              id: nextId("tsc"),
              call_id: nextId("call"),
              execution: "client",
              status: "completed",
              arguments: { query: move.query, limit: 8 },
            }
          : {
              type: "message",
              id: nextId("msg"),
              status: "completed",
              role: "assistant",
              content: [{ type: "output_text", text: move.text, annotations: [] }],
            };
    const base = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model };
    const responseUsage = {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 120,
    };
    let seq = 0;
    const events: Json[] = [
      { type: "response.created", response: { ...base, status: "in_progress", output: [] } },
      {
        type: "response.output_item.added",
        output_index: 0,
        item:
          move.kind === "call"
            ? { ...item, arguments: "" }
            : move.kind === "search"
              ? item
              : { ...item, content: [] },
      },
      ...(move.kind === "answer"
        ? [
            {
              type: "response.output_text.delta",
              item_id: item.id,
              output_index: 0,
              content_index: 0,
              delta: move.text,
            },
          ]
        : []),
      { type: "response.output_item.done", output_index: 0, item },
      {
        type: "response.completed",
        response: { ...base, status: "completed", output: [item], usage: responseUsage },
      },
    ].map((event) => ({ ...event, sequence_number: seq++ }));
    sse(res, events, true);
  },
  chat(res, move, parsed, model) {
    const id = nextId("chatcmpl");
    const created = Math.floor(Date.now() / 1000);
    const toolCall =
      move.kind === "call"
        ? {
            id: nextId("call"),
            type: "function",
            function: { name: move.name, arguments: JSON.stringify(move.args) },
          }
        : undefined;
    const finish_reason = move.kind === "call" ? "tool_calls" : "stop";
    const chatUsage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
    if (!parsed.stream) {
      const message = toolCall
        ? { role: "assistant", content: null, tool_calls: [toolCall] }
        : { role: "assistant", content: move.kind === "answer" ? move.text : "" };
      return json(res, 200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message, finish_reason }],
        usage: chatUsage,
      });
    }
    const chunk = (delta: Json, finish: string | null, extra: Json = {}) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    });
    sse(res, [
      chunk({ role: "assistant", content: "" }, null),
      toolCall
        ? chunk({ tool_calls: [{ index: 0, ...toolCall }] }, null)
        : chunk({ content: move.kind === "answer" ? move.text : "" }, null),
      chunk({}, finish_reason, { usage: chatUsage }),
      "[DONE]",
    ]);
  },
};

/** One model request on `wire`: read, answered on `res` with the script's next move, and returned as recorded. */
export function reply(wire: Wire, path: string, body: Json, res: ServerResponse): RecordedRequest {
  const parsed = parsers[wire](body);
  const move: Move =
    parsed.offered.length === 0 && !parsed.prompt.includes("SCENARIO:")
      ? { kind: "answer", text: "SCRIPT: side request" }
      : nextMove(scenarioOf(parsed.prompt), parsed.offered, parsed.turns, parsed.canSearch);
  const model = str(body.model || "scripted");
  if (wire === "responses") renderers.responses(res, move, parsed, model);
  else if (move.kind === "search") throw new Error(`scripted model: no tool search on the ${wire} wire`);
  else renderers[wire](res, move, parsed, model);
  return {
    wire,
    path,
    offered: parsed.offered,
    bridgeTools: BRIDGE_TOOLS.flatMap((name) => toolNamed(parsed.offered, name) ?? []),
    turns: parsed.turns,
    prompt: parsed.prompt,
    move,
    at: Date.now(),
  };
}

function wireOf(method: string, path: string): Wire | "models" | "count" | undefined {
  if (method === "GET" && /\/models\/?$/.test(path)) return "models";
  if (method !== "POST") return undefined;
  if (/\/messages\/count_tokens$/.test(path) || /:countTokens$/.test(path)) return "count";
  if (/\/messages$/.test(path)) return "anthropic";
  if (/:(stream)?[gG]enerateContent$/.test(path)) return "gemini";
  if (/\/responses$/.test(path)) return "responses";
  if (/\/chat\/completions$/.test(path)) return "chat";
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024 * 1024) throw new Error("request body over 64 MiB");
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as Json) : {};
}

/** Starts the scripted model on 127.0.0.1 (port 0). */
export async function startModelApi(): Promise<ModelApi> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const kind = wireOf(req.method ?? "GET", path);
    try {
      if (kind === "models")
        return json(res, 200, {
          object: "list",
          data: [{ id: "scripted", object: "model", created: 0, owned_by: "test" }],
          models: [{ name: "models/scripted" }],
        });
      const body = await readBody(req);
      if (kind === "count") return json(res, 200, { input_tokens: 100, totalTokens: 100 });
      if (!kind)
        return json(res, 404, { error: { message: `scripted model: no route for ${req.method} ${path}` } });
      if (process.env.CHAT_HOSTS_DUMP)
        appendFileSync(process.env.CHAT_HOSTS_DUMP, `${path} ${JSON.stringify(body)}\n`);
      requests.push(reply(kind, path, body, res));
    } catch (error) {
      if (!res.headersSent) json(res, 500, { error: { message: String(error) } });
      else res.end();
    }
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    agentTurns: () => requests.filter((r) => r.offered.length > 0),
    firstReach: () => {
      const turns = requests.filter((r) => r.offered.length > 0);
      return (turns[0]?.move?.kind === "search" ? turns[1] : turns[0])?.bridgeTools;
    },
    lastAnswer: () => {
      for (const r of [...requests].reverse())
        if (r.move?.kind === "answer" && r.offered.length) return r.move.text;
      return undefined;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
