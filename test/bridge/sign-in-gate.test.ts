/**
 * The sign-in gate as hosts meet it, in process on a fake clock: the first list waits for the sign-in only where
 * waiting can bring the tools, a call with no browser is answered at once, log messages only for hosts that asked,
 * and what a host sends while signed out is kept bounded.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SignInPrompt } from "../../src/auth/index.js";
import {
  OPENING_GRACE_MS,
  SIGNED_OUT_QUEUE_LIMIT,
  SignInGate,
} from "../../src/bridge/sign-in/sign-in-gate.js";
import { quietLog } from "./fixtures/in-process-relays.js";

type Json = Record<string, unknown>;

const TOOLS = [{ name: "list_chats", inputSchema: { type: "object" } }];
const LOGIN = "chat-mcp-bridge login http://127.0.0.1:8787/mcp";
/** How long a request waits for the sign-in (the bridge's default): a call from its arrival, lists from the start. */
const WAIT_MS = 45_000;

/** A gate over a fake server that answers lists with TOOLS and calls with "ran"; the sign-in ends when told. */
function gateWithHost(login: { signedIn?: boolean; lastTools?: Json[]; written?: Json[][] } = {}) {
  const toHost: Json[] = [];
  const toServer: Json[] = [];
  let finish: (reached?: boolean) => void = () => {};
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
    signedIn: async () => login.signedIn === true,
    rememberedDiscover: async () => undefined,
    lastTools: { read: async () => login.lastTools, write: (tools) => login.written?.push(tools) },
    signIn: () =>
      new Promise<boolean>((resolve, reject) => {
        finish = (reached = true) => resolve(reached);
        fail = reject;
      }),
    waitMs: WAIT_MS,
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
    /** The sign-in ends: signed in, or (false) without reaching the server. */
    finish: (reached?: boolean) => finish(reached),
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

const signInToolOf = (answer: Json | undefined) => {
  const tools = (answer?.result as { tools?: Json[] } | undefined)?.tools ?? [];
  expect(tools.map((tool) => tool.name)).toEqual(["sign_in"]);
  return tools[0] as { name: string; description: string };
};
const textOf = (answer: Json | undefined) =>
  ((answer?.result as { content?: Array<{ text: string }> } | undefined)?.content ?? [])
    .map((part) => part.text)
    .join("");
const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "claude-code", version: "2.1.332" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

describe("a signed-out start: the host's opening is answered at once", () => {
  it("an app's initialize (Claude Code starts its turn in about 2 s), before any sign-in has shown a link", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(1)).toMatchObject({ result: { capabilities: { tools: { listChanged: true } } } });
    expect(host.toServer).toEqual([]);
  });

  it("an agent library's initialize (60 s to spare), before any sign-in has shown a link: within the opening grace", async () => {
    const host = gateWithHost();
    host.initialize("my-agent");
    await vi.advanceTimersByTimeAsync(OPENING_GRACE_MS - 1);
    expect(host.answerTo(1)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(host.answerTo(1)).toMatchObject({ result: { capabilities: { tools: { listChanged: true } } } });
    expect(host.toServer).toEqual([]);
  });

  it("a sign-in that needs a person ends the opening grace at once", async () => {
    const host = gateWithHost();
    host.initialize("my-agent");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(1)).toMatchObject({ result: { capabilities: { tools: { listChanged: true } } } });
  });

  it("a server that lets the bridge in within the grace answers the host's initialize itself", async () => {
    const host = gateWithHost();
    host.initialize("my-agent");
    await vi.advanceTimersByTimeAsync(0);
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.toServer.map((message) => message.method)).toEqual(["initialize"]);
    expect(host.answerTo(1)).toMatchObject({ result: { serverInfo: { name: "s" } } });
  });

  it("a sign-in that fails within the grace: the opening is answered by the bridge, once", async () => {
    const host = gateWithHost();
    host.initialize("my-agent");
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    host.fail(new Error("refused"));
    await vi.advanceTimersByTimeAsync(OPENING_GRACE_MS);
    expect(host.toHost.filter((message) => message.id === 1 && !("method" in message))).toHaveLength(1);
    expect(host.toHost.filter((message) => message.id === 2 && !("method" in message))).toHaveLength(1);
    expect(host.toServer).toEqual([]);
  });

  it("a 2026-07-28 host's server/discover and subscriptions/listen (Claude Code lists only once acknowledged)", async () => {
    const host = gateWithHost();
    host.send({ id: 1, method: "server/discover", params: { _meta: MODERN_META } });
    host.send({
      id: 2,
      method: "subscriptions/listen",
      params: { _meta: MODERN_META, notifications: { toolsListChanged: true } },
    });
    await vi.advanceTimersByTimeAsync(OPENING_GRACE_MS);
    expect(host.answerTo(1)).toMatchObject({ result: { resultType: "complete" } });
    expect(host.toHost.map((message) => message.method)).toContain(
      "notifications/subscriptions/acknowledged",
    );
    expect(host.toServer).toEqual([]);
  });
});

describe("a 2026-07-28 agent library that opens with server/discover", () => {
  const meta = { ...MODERN_META, "io.modelcontextprotocol/clientInfo": { name: "my-agent", version: "1" } };
  /**
   * The discover, answered; the grace sign-in ends without reaching the server (nothing but a discover had come, so
   * the era probe was not let sign in); then the host's list.
   */
  async function discoverThenList() {
    const host = gateWithHost();
    host.send({ id: 1, method: "server/discover", params: { _meta: meta } });
    await vi.advanceTimersByTimeAsync(0);
    host.finish(false);
    await vi.advanceTimersByTimeAsync(OPENING_GRACE_MS);
    expect(host.answerTo(1)).toMatchObject({ result: { resultType: "complete" } });
    host.send({ id: 2, method: "tools/list", params: { _meta: meta } });
    return host;
  }

  it("a grace sign-in refused for a bare discover leaves the gate shut: the list waits for the next sign-in", async () => {
    const host = await discoverThenList();
    await vi.advanceTimersByTimeAsync(WAIT_MS - OPENING_GRACE_MS - 1);
    expect(host.answerTo(2)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    signInToolOf(host.answerTo(2));
    expect(host.toServer).toEqual([]);
  });

  it("a server that cannot be reached by the list's own sign-in either: the relay takes the list (and reports it)", async () => {
    const host = await discoverThenList();
    await vi.advanceTimersByTimeAsync(0);
    host.finish(false);
    await vi.advanceTimersByTimeAsync(0);
    expect(host.toServer.map((message) => message.method)).toEqual(["tools/list"]);
  });
});

describe("the first lists while a sign-in is under way: they wait only where waiting can bring the tools", () => {
  it("an agent library (an MCP SDK, 60 s time-out): held, then answered by the server with its tools; no list change", async () => {
    const host = gateWithHost();
    host.initialize("my-agent");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    host.send({ method: "notifications/initialized" });
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(WAIT_MS - 1_000);
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

  it("an agent library whose person takes longer: the sign_in tool by the sign-in wait from its first message", async () => {
    const host = gateWithHost();
    host.initialize("my-agent");
    await vi.advanceTimersByTimeAsync(OPENING_GRACE_MS);
    host.gate.showPrompt(browserPrompt);
    await vi.advanceTimersByTimeAsync(5_000);
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(WAIT_MS - 5_000 - OPENING_GRACE_MS - 1);
    expect(host.answerTo(2)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(signInToolOf(host.answerTo(2)).description).toMatch(/restart this MCP host if they do not/);
  });

  it("no browser: an agent library's list still waits (its stderr, and its log if it asked, show the code)", async () => {
    const host = gateWithHost();
    host.initialize("my-agent");
    await vi.advanceTimersByTimeAsync(OPENING_GRACE_MS);
    host.send({ method: "notifications/initialized" });
    host.gate.showPrompt(devicePrompt);
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(host.answerTo(2)).toBeUndefined();
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: TOOLS } });
  });

  it("a host that declares URL elicitation is shown the link in its dialog, so its list still waits for the sign-in", async () => {
    const host = gateWithHost();
    host.initialize("my-agent", { elicitation: { url: {} } });
    await vi.advanceTimersByTimeAsync(OPENING_GRACE_MS);
    host.send({ method: "notifications/initialized" });
    host.gate.showPrompt(devicePrompt);
    expect(host.toHost.some((message) => message.method === "elicitation/create")).toBe(true);
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(host.answerTo(2)).toBeUndefined();
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: TOOLS } });
  });

  it("an app (Claude Code): its list gets the sign_in tool at once, saying how Claude Code reloads; then the list change", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    const tool = signInToolOf(host.answerTo(2));
    expect(tool.description).toMatch(/not signed in to http:\/\/127\.0\.0\.1:8787\/mcp/);
    expect(tool.description).toMatch(/type \/mcp in Claude Code/);
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(listChanges(host.toHost)).toEqual([
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    ]);
    // A host that did not reload calls sign_in: it hears it is signed in, and how to load the tools.
    host.send({ id: 3, method: "tools/call", params: { name: "sign_in", arguments: {} } });
    expect(textOf(host.answerTo(3))).toMatch(/^Signed in to .*type \/mcp in Claude Code/);
    expect(host.toServer.some((message) => JSON.stringify(message).includes("sign_in"))).toBe(false);
  });

  it("Gemini CLI lists prompts, tools and resources one after another: each answered at once", async () => {
    const host = gateWithHost();
    host.initialize("gemini-cli-mcp-client");
    host.send({ id: 2, method: "prompts/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { prompts: [] } });
    host.send({ id: 3, method: "tools/list" });
    host.send({ id: 4, method: "resources/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(signInToolOf(host.answerTo(3)).description).toMatch(/\/mcp refresh in Gemini CLI/);
    expect(host.answerTo(4)).toEqual({ jsonrpc: "2.0", id: 4, result: { resources: [] } });
  });

  it("the OpenAI Agents SDK (5 s, lists again on every run): answered at once, then the server's list", async () => {
    const host = gateWithHost();
    host.initialize("stdio: npx");
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    signInToolOf(host.answerTo(2));
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    host.send({ id: 3, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(3)).toEqual({ jsonrpc: "2.0", id: 3, result: { tools: TOOLS } });
  });

  it("the sign_in tool's description has the link once shown (before: how to get it)", async () => {
    const host = gateWithHost();
    host.initialize("claude-code");
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(signInToolOf(host.answerTo(2)).description).toMatch(/Call sign_in to get the sign-in link/);
    host.gate.showPrompt(devicePrompt);
    expect(listChanges(host.toHost)).toEqual([]);
    host.send({ id: 3, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(signInToolOf(host.answerTo(3)).description).toContain("ABCD-EFGH");
  });

  it("a sign_in call before the link is known is answered with it as soon as it is shown", async () => {
    const host = gateWithHost();
    host.initialize("codex-mcp-client");
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    host.send({ id: 3, method: "tools/call", params: { name: "sign_in", arguments: {} } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(host.answerTo(3)).toBeUndefined();
    host.gate.showPrompt(devicePrompt);
    expect(textOf(host.answerTo(3))).toMatch(/ABCD-EFGH.*restart this app/s);
  });

  it("a sign-in that fails answers the held list at once, with the sign_in tool saying why (never an empty list)", async () => {
    const host = gateWithHost();
    host.initialize("my-agent");
    await vi.advanceTimersByTimeAsync(0);
    host.gate.showPrompt(browserPrompt);
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(1_000);
    host.fail(new Error("denied"));
    await vi.advanceTimersByTimeAsync(0);
    expect(signInToolOf(host.answerTo(2)).description).toMatch(/denied/);
    host.send({ id: 3, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(signInToolOf(host.answerTo(3)).description).toMatch(/denied/);
  });
});

describe("the tools this login listed last", () => {
  it("signed out, they are the list by the deadline; the first call waits for the sign-in and reaches the server", async () => {
    const written: Json[][] = [];
    const host = gateWithHost({ lastTools: TOOLS, written });
    host.initialize("codex-mcp-client");
    host.send({ id: 2, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(host.answerTo(2)).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: TOOLS } });
    host.send({ id: 3, method: "tools/call", params: { name: "list_chats", arguments: {} } });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(host.answerTo(3)).toBeUndefined();
    host.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(textOf(host.answerTo(3))).toBe("ran");
  });

  it("signed in, the server's whole list is kept for the next start, once per change", async () => {
    const written: Json[][] = [];
    const host = gateWithHost({ signedIn: true, written });
    host.initialize("claude-code");
    host.send({ id: 2, method: "tools/list" });
    host.send({ id: 3, method: "tools/list" });
    await vi.advanceTimersByTimeAsync(0);
    expect(written).toEqual([TOOLS]);
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
