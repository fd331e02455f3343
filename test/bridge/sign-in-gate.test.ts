/**
 * The sign-in gate as hosts meet it, in process on a fake clock: the first list waits for the sign-in within the
 * host's patience, a call with no browser is answered at once, log messages only for hosts that asked, and what
 * a host sends while signed out is kept bounded.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SignInPrompt } from "../../src/auth/index.js";
import { SHORT_LIST_WAIT_MS } from "../../src/bridge/host-patience.js";
import { SignInGate } from "../../src/bridge/sign-in-gate.js";
import { SIGNED_OUT_QUEUE_LIMIT } from "../../src/bridge/signed-out-queue.js";
import { quietLog } from "./fixtures/in-process-relays.js";

type Json = Record<string, unknown>;

const TOOLS = [{ name: "list_chats", inputSchema: { type: "object" } }];
const LOGIN = "chat-mcp-bridge login http://127.0.0.1:8787/mcp";

/** A gate over a fake server that answers lists with TOOLS and calls with "ran"; the sign-in ends when told. */
function gateWithHost() {
  const toHost: Json[] = [];
  const toServer: Json[] = [];
  let finish: () => void = () => {};
  let fail: (error: Error) => void = () => {};
  let gate!: SignInGate;
  const relay = {
    fromClient(message: JSONRPCMessage) {
      const value = message as Json;
      toServer.push(value);
      if (!("id" in value) || !("method" in value)) return;
      const result =
        value.method === "tools/list"
          ? { tools: TOOLS }
          : value.method === "tools/call"
            ? { content: [{ type: "text", text: "ran" }] }
            : value.method === "initialize"
              ? {
                  protocolVersion: "2025-11-25",
                  capabilities: { tools: {} },
                  serverInfo: { name: "s", version: "1" },
                }
              : {};
      queueMicrotask(() => gate.toClient({ jsonrpc: "2.0", id: value.id, result } as JSONRPCMessage));
    },
    close() {},
  };
  gate = new SignInGate({
    relay,
    toClient: (message) => toHost.push(message as Json),
    log: quietLog,
    serverUrl: "http://127.0.0.1:8787/mcp",
    signedIn: async () => false,
    rememberedDiscover: async () => undefined,
    signIn: () =>
      new Promise<void>((resolve, reject) => {
        finish = resolve;
        fail = reject;
      }),
    callWaitMs: 30_000,
    loginCommand: LOGIN,
  });
  const send = (message: Json) => gate.fromClient({ jsonrpc: "2.0", ...message } as JSONRPCMessage);
  const answerTo = (id: number) => toHost.find((message) => message.id === id && !("method" in message));
  const initialize = (name: string, capabilities: Json = {}) => {
    send({
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name, version: "1.0.0" } },
    });
  };
  return {
    gate,
    toHost,
    toServer,
    send,
    answerTo,
    initialize,
    finish: () => finish(),
    fail: (error: Error) => fail(error),
  };
}

const browserPrompt: SignInPrompt = {
  url: "http://127.0.0.1:20000/start/x",
  message: "A browser window opened to sign in to http://127.0.0.1:8787/mcp; finish signing in there.",
  browserOpened: true,
};
const devicePrompt: SignInPrompt = {
  url: "https://chat.example.com/device?user_code=ABCD-EFGH",
  message:
    "Sign-in needed: open https://chat.example.com/device?user_code=ABCD-EFGH in a browser on any device and check that it shows the code ABCD-EFGH within 300 s; then try again.",
  browserOpened: false,
};

const listChanges = (messages: Json[]) =>
  messages.filter((message) => String(message.method).endsWith("/list_changed"));

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the first tools/list while a sign-in is under way", () => {
  it("an MCP SDK host (60 s time-out): held, then answered by the server with its tools; no list change", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(host.answerTo(1)).toBeDefined();
    host.send({ method: "notifications/initialized" });
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(40_000);
    expect(host.answerTo(2)).toBeUndefined();
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: TOOLS } });
    expect(host.toServer.map((message) => message.method)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
    ]);
    expect(listChanges(host.toHost)).toEqual([]);
  });

  it("a person slower than the host's patience: an empty list before 60 s, then the list change", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(2_000);
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(49_999);
    expect(host.answerTo(2)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: [] } });
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(listChanges(host.toHost)).toEqual([
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    ]);
  });

  it("the OpenAI Agents SDK (5 s, lists again on every run): answered within 5 s of its list, then the list change", async () => {
    const host = gateWithHost();
    host.initialize("stdio: npx");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(2_000);
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(SHORT_LIST_WAIT_MS);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: [] } });
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    host.send({ id: 3, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(3)).toEqual({ jsonrpc: "2.0", id: 3, result: { tools: TOOLS } });
  });

  it("a list sent while the grace still holds initialize is timed from when the host sent it", async () => {
    const host = gateWithHost();
    host.initialize("stdio: node");
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(SHORT_LIST_WAIT_MS);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: [] } });
  });

  it("a sign-in that fails answers the held list at once (empty)", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(2_000);
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(1_000);
    host.fail(new Error("denied"));
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: [] } });
  });
});

describe("no browser: a signed-out tools/call", () => {
  it("is answered at once with the device code URL and the login command; the call after approval goes through", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(devicePrompt);
    await vi.advanceTimersByTimeAsync(0);
    host.send({ method: "notifications/initialized" });
    host.send({ id: 2, method: "tools/call", params: { name: "list_chats", arguments: {} } });
    await vi.advanceTimersByTimeAsync(0);
    const answer = host.answerTo(2) as { result: { isError: boolean; content: Array<{ text: string }> } };
    expect(answer.result.isError).toBe(true);
    const text = answer.result.content[0]!.text;
    expect(text).toContain("https://chat.example.com/device?user_code=ABCD-EFGH");
    expect(text).not.toContain("127.0.0.1:20000");
    expect(text).toContain(LOGIN);
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    host.send({ id: 3, method: "tools/call", params: { name: "list_chats", arguments: {} } });
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(3)).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "text", text: "ran" }] },
    });
  });

  it("a call held before the code was shown is answered when it is", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(2_000);
    host.send({ id: 2, method: "tools/call", params: { name: "list_chats", arguments: {} } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(host.answerTo(2)).toBeUndefined();
    host.gate.showPrompt(devicePrompt);
    expect(JSON.stringify(host.answerTo(2))).toContain("ABCD-EFGH");
  });
});

describe("notifications/message while signed out", () => {
  it("is not sent to a host that asked for no log messages (the Vercel AI SDK fails on it)", async () => {
    const host = gateWithHost();
    host.initialize("ai-sdk-mcp-client");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(devicePrompt);
    host.send({ method: "notifications/initialized" });
    await vi.advanceTimersByTimeAsync(0);
    expect(host.toHost.filter((message) => message.method === "notifications/message")).toEqual([]);
  });

  it("is sent to a host that set a level with logging/setLevel", async () => {
    const host = gateWithHost();
    host.initialize("inspector");
    host.send({ id: 2, method: "logging/setLevel", params: { level: "info" } });
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(devicePrompt);
    host.send({ method: "notifications/initialized" });
    await vi.advanceTimersByTimeAsync(0);
    const logs = host.toHost.filter((message) => message.method === "notifications/message");
    expect(logs).toHaveLength(1);
    expect(JSON.stringify(logs[0])).toContain("ABCD-EFGH");
  });
});

describe("what a host sends while signed out is bounded", () => {
  it("100,000 notifications: one of each kind reaches the server, and memory stays flat", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(2_000);
    host.send({ method: "notifications/initialized" });
    const padding = "x".repeat(1_000);
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100_000; i++)
      host.send({
        method: "notifications/roots/list_changed",
        params: { _meta: { padding: `${padding}${i}` } },
      });
    const grown = process.memoryUsage().heapUsed - before;
    // Each kept notification would hold its 1 KB: 100 MB for all of them.
    expect(grown).toBeLessThan(40 * 1024 * 1024);
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.toServer.map((message) => message.method)).toEqual([
      "initialize",
      "notifications/initialized",
      "notifications/roots/list_changed",
    ]);
  });

  it("logging/setLevel is kept once, the last one; each is answered", async () => {
    const host = gateWithHost();
    host.initialize("inspector");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(2_000);
    for (let id = 10; id < 20; id++)
      host.send({ id, method: "logging/setLevel", params: { level: id === 19 ? "error" : "info" } });
    for (let id = 10; id < 20; id++) expect(host.answerTo(id)).toEqual({ jsonrpc: "2.0", id, result: {} });
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    const levels = host.toServer.filter((message) => message.method === "logging/setLevel");
    expect(levels).toEqual([
      { jsonrpc: "2.0", id: 19, method: "logging/setLevel", params: { level: "error" } },
    ]);
    // The server's answer to the kept one is not the host's to see twice.
    expect(host.toHost.filter((message) => message.id === 19)).toHaveLength(1);
  });

  it("past the bound, a request is refused with an error the host sees", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(2_000);
    for (let id = 100; id < 100 + SIGNED_OUT_QUEUE_LIMIT + 5; id++)
      host.send({ id, method: "tools/call", params: { name: "list_chats", arguments: {} } });
    const refused = host.toHost.filter((message) => "error" in message);
    expect(refused.length).toBeGreaterThanOrEqual(5);
    expect(JSON.stringify(refused[0])).toContain(LOGIN);
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.toServer.filter((message) => message.method === "tools/call").length).toBeLessThanOrEqual(
      SIGNED_OUT_QUEUE_LIMIT,
    );
  });
});
