/** `--ignore-tool` and `--read-only`: which tools the client sees, and calls of hidden ones answered by the bridge alone. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { LegacyServerRelay } from "../../src/bridge/eras/legacy-server-relay.js";
import {
  INVALID_PARAMS_ERROR_CODE,
  ToolFilter,
  toolFilterStep,
  wildcardRegex,
} from "../../src/bridge/steps/index.js";
import { toolPolicy } from "../../src/bridge/steps/policy.js";
import { LegacyUpstream, type RemoteTransport } from "../../src/bridge/upstream/legacy/legacy-upstream.js";

const TOOLS = [
  { name: "create_chat", annotations: { readOnlyHint: false } },
  { name: "list_chats", annotations: { readOnlyHint: true } },
  { name: "get_chat", annotations: { readOnlyHint: true } },
  { name: "resolve_task" },
  { name: "Resolve_Other" },
];
const names = (result: unknown) => (result as { tools: { name: string }[] }).tools.map((tool) => tool.name);

describe("wildcard patterns", () => {
  it.each([
    ["resolve_*", "resolve_task", true],
    ["resolve_*", "Resolve_Other", false],
    ["*_chat", "create_chat", true],
    ["*_chat", "list_chats", false],
    ["*", "anything", true],
    ["get_chat", "get_chat", true],
    ["get_chat", "get_chats", false],
    ["a.b", "axb", false],
    ["a+(b)", "a+(b)", true],
    ["*chat*", "list_chats", true],
  ])("%s matches %s: %s", (pattern, name, expected) => {
    expect(wildcardRegex(pattern).test(name)).toBe(expected);
  });
});

describe("ToolFilter", () => {
  it("is absent when no flag hides anything", () => {
    expect(ToolFilter.from({})).toBeUndefined();
    expect(ToolFilter.from({ ignoreTools: [], readOnly: false })).toBeUndefined();
  });

  it("drops ignored tools from a list and names the flag and pattern when refusing a call", () => {
    const filter = ToolFilter.from({ ignoreTools: ["resolve_*", "create_chat"] })!;
    const result = { tools: TOOLS, nextCursor: "c2" };
    const filtered = filter.filterListResult(result);
    expect(names(filtered)).toEqual(["list_chats", "get_chat", "Resolve_Other"]);
    expect((filtered as { nextCursor: string }).nextCursor).toBe("c2");
    expect(filter.refusal("resolve_task")).toBe(
      'the tool "resolve_task" is hidden by --ignore-tool "resolve_*"',
    );
    expect(filter.refusal("list_chats")).toBeUndefined();
  });

  it("--read-only keeps only tools annotated readOnlyHint: true; an unlisted tool is refused too", () => {
    const filter = ToolFilter.from({ readOnly: true })!;
    expect(filter.refusal("list_chats")).toMatch(/not known to be read-only/);
    expect(names(filter.filterListResult({ tools: TOOLS }))).toEqual(["list_chats", "get_chat"]);
    expect(filter.refusal("list_chats")).toBeUndefined();
    expect(filter.refusal("create_chat")).toMatch(/hidden by --read-only/);
    expect(filter.refusal("resolve_task")).toMatch(/hidden by --read-only/);
  });

  it("leaves a result it cannot read as it is", () => {
    const filter = ToolFilter.from({ ignoreTools: ["*"] })!;
    const odd = { tools: "not a list" };
    expect(filter.filterListResult(odd)).toBe(odd);
  });
});

/** A relay over a fake remote that lists `tools()` and records every message it was sent. */
function relayOver(tools: () => typeof TOOLS, filter: ToolFilter | undefined) {
  const sent: JSONRPCMessage[] = [];
  const toClient: JSONRPCMessage[] = [];
  const onSent = new Set<() => void>();
  /** Resolves once a message sent to the remote matches. */
  const sentWhen = (match: (message: JSONRPCMessage) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!sent.some(match)) return;
        onSent.delete(check);
        resolve();
      };
      onSent.add(check);
      check();
    });
  let transport: RemoteTransport | undefined;
  const log = { info() {}, debug() {}, debugEnabled: false };
  const createTransport = () => {
    transport = {
      sessionId: "s",
      async start() {},
      async close() {},
      async terminateSession() {},
      setProtocolVersion() {},
      async send(message) {
        sent.push(message);
        for (const check of onSent) check();
        if (!("id" in message) || !("method" in message)) return;
        const result =
          message.method === "tools/list" ? { tools: tools() } : { content: [{ type: "text", text: "ran" }] };
        queueMicrotask(() => transport?.onmessage?.({ jsonrpc: "2.0", id: message.id, result }));
      },
    } as RemoteTransport;
    return transport;
  };
  const answered = new Map<number, (message: Record<string, unknown>) => void>();
  const relay = new LegacyServerRelay({
    openUpstream: (toBridge) =>
      new LegacyUpstream({
        url: new URL("http://127.0.0.1:9/mcp"),
        exchange: async () => {
          throw new Error("unused");
        },
        log,
        toClient: toBridge,
        createTransport,
      }),
    toClient: (message) => {
      toClient.push(message);
      if ("id" in message && typeof message.id === "number")
        answered.get(message.id)?.(message as Record<string, unknown>);
    },
    log,
    policy: toolPolicy(filter ? { toolFilter: filter, steps: [toolFilterStep(filter)] } : {}),
  });
  /** Resolves with the relay's answer to `message`, when the relay writes it to the client. */
  const answer = (message: JSONRPCMessage & { id: number }) =>
    new Promise<Record<string, unknown>>((resolve) => {
      answered.set(message.id, resolve);
      relay.fromClient(message);
    });
  return {
    relay,
    sent,
    sentWhen,
    toClient,
    answer,
    notify: (m: JSONRPCMessage) => transport?.onmessage?.(m),
  };
}

describe("the relay with a tool filter", () => {
  it("filters every tools/list answer, also after the server says the list changed", async () => {
    let tools = TOOLS.slice(0, 3);
    const remote = relayOver(() => tools, ToolFilter.from({ ignoreTools: ["create_*", "resolve_*"] }));
    const first = await remote.answer({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(names(first.result)).toEqual(["list_chats", "get_chat"]);
    tools = TOOLS;
    remote.notify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    expect(remote.toClient).toContainEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    const second = await remote.answer({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(names(second.result)).toEqual(["list_chats", "get_chat", "Resolve_Other"]);
  });

  it("answers a call of a hidden tool itself, with an error naming the flag, and never sends it", async () => {
    const remote = relayOver(() => TOOLS, ToolFilter.from({ ignoreTools: ["resolve_*"] }));
    const refused = await remote.answer({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "resolve_task", arguments: {} },
    });
    expect(refused).toMatchObject({ id: 7, error: { code: INVALID_PARAMS_ERROR_CODE } });
    expect((refused.error as { message: string }).message).toMatch(
      /--ignore-tool "resolve_\*"; it was not sent to the server/,
    );
    expect(remote.sent).toEqual([]);
    const allowed = await remote.answer({
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "list_chats", arguments: {} },
    });
    expect(allowed).toMatchObject({ id: 8, result: { content: [{ text: "ran" }] } });
    expect(remote.sent).toHaveLength(1);
  });

  it("drops a tools/call of a hidden tool sent as a notification (no id): nothing sent, nothing answered", async () => {
    const remote = relayOver(() => TOOLS, ToolFilter.from({ ignoreTools: ["resolve_*"] }));
    remote.relay.fromClient({
      jsonrpc: "2.0",
      method: "tools/call",
      params: { name: "resolve_task", arguments: {} },
    } as JSONRPCMessage);
    remote.relay.fromClient({
      jsonrpc: "2.0",
      method: "tools/call",
      params: { name: "list_chats", arguments: {} },
    } as JSONRPCMessage);
    await remote.sentWhen(
      (message) => (message as { params?: { name?: string } }).params?.name === "list_chats",
    );
    const ping = await remote.answer({ jsonrpc: "2.0", id: 9, method: "ping" });
    expect(ping).toMatchObject({ id: 9 });
    const sentNames = remote.sent.map((message) => (message as { params?: { name?: string } }).params?.name);
    expect(sentNames).toHaveLength(2);
    expect(sentNames).toContain("list_chats");
    expect(sentNames).not.toContain("resolve_task");
    expect(remote.toClient).toHaveLength(1);
  });

  it("relays lists untouched without a filter", async () => {
    const remote = relayOver(() => TOOLS, undefined);
    const listed = await remote.answer({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(names(listed.result)).toEqual(TOOLS.map((tool) => tool.name));
  });
});
