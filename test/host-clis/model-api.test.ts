/** The scripted model's Responses wire: a host that defers its servers' tools behind `tool_search` is searched first. */
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { type Json, reply } from "./model-api.js";
import { TOOL_QUERY } from "./model-script.js";

/** Answers one request into a stand-in response; returns the items of its `response.output_item.done` events. */
function itemsOf(body: Json): { items: Json[]; move: unknown } {
  let text = "";
  const res = {
    req: { url: "/v1/responses" },
    writeHead: () => res,
    write: (chunk: string) => {
      text += chunk;
      return true;
    },
    end: (chunk?: string) => {
      if (chunk) text += chunk;
    },
  };
  const record = reply("responses", "/v1/responses", body, res as unknown as ServerResponse);
  const items = text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as Json)
    .filter((event) => event.type === "response.output_item.done")
    .map((event) => event.item as Json);
  return { items, move: record.move };
}

const prompt = {
  type: "message",
  role: "user",
  content: [{ type: "input_text", text: "SCENARIO:list chats" }],
};
const toolSearch = {
  type: "tool_search",
  execution: "client",
  description: "Search deferred tools.",
  parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};
const shell = { type: "function", name: "exec_command", parameters: { type: "object" } };
/** What Codex answers a search with: the server's tools in a namespace named for it. */
const found = (call_id: string, tools: string[]) => ({
  type: "tool_search_output",
  call_id,
  status: "completed",
  execution: "client",
  tools: [
    {
      type: "namespace",
      name: "mcp__chat",
      description: "Tools of the chat server.",
      tools: tools.map((name) => ({ type: "function", name, parameters: { type: "object" } })),
    },
  ],
});

describe("the scripted model on the Responses wire", () => {
  it("offered tool_search and no chat tools, searches, then calls the namespaced tool the search found", () => {
    const first = itemsOf({ stream: true, tools: [shell, toolSearch], input: [prompt] });
    expect(first.items).toEqual([
      expect.objectContaining({
        type: "tool_search_call",
        execution: "client",
        arguments: { query: TOOL_QUERY, limit: 8 },
      }),
    ]);
    const search = first.items[0] as Json;
    const call_id = String(search.call_id);

    const second = itemsOf({
      stream: true,
      tools: [shell, toolSearch],
      input: [prompt, search, found(call_id, ["list_chats", "create_chat"])],
    });
    expect(second.items).toEqual([
      expect.objectContaining({ type: "function_call", namespace: "mcp__chat", name: "list_chats" }),
    ]);
    const call = second.items[0] as Json;

    const third = itemsOf({
      stream: true,
      tools: [shell, toolSearch],
      input: [
        prompt,
        search,
        found(call_id, ["list_chats", "create_chat"]),
        call,
        { type: "function_call_output", call_id: call.call_id, output: '{"data":[]}' },
      ],
    });
    expect(third.move).toEqual({ kind: "answer", text: expect.stringMatching(/^SCRIPT: listed: /) });
  });

  it("offered a server's tools in a namespace, calls one by its namespace and name", () => {
    const namespace = found("unused", ["list_chats"]).tools[0];
    const { items } = itemsOf({ tools: [shell, namespace, toolSearch], input: [prompt] });
    expect(items).toEqual([
      expect.objectContaining({ type: "function_call", namespace: "mcp__chat", name: "list_chats" }),
    ]);
  });

  it("searches once: a search that found none of the chat tools ends in an answer naming what was offered", () => {
    const search = {
      type: "tool_search_call",
      call_id: "s1",
      execution: "client",
      arguments: { query: "chat" },
    };
    const { move } = itemsOf({
      tools: [shell, toolSearch],
      input: [prompt, search, { ...found("s1", []), tools: [] }],
    });
    expect(move).toEqual({
      kind: "answer",
      text: "SCRIPT: no chat tools (offered: exec_command, tool_search)",
    });
  });

  it("signed out, the search finds sign_in and the model calls it", () => {
    const search = {
      type: "tool_search_call",
      call_id: "s1",
      execution: "client",
      arguments: { query: "chat" },
    };
    const { items } = itemsOf({
      tools: [shell, toolSearch],
      input: [prompt, search, found("s1", ["sign_in"])],
    });
    expect(items).toEqual([
      expect.objectContaining({ type: "function_call", namespace: "mcp__chat", name: "sign_in" }),
    ]);
  });
});
