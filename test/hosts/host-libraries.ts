/**
 * The MCP host libraries agents are built with, each driven through its own MCP client layer as its README shows
 * (no model is called): start the bridge as a stdio server (command + args), list tools once, call a tool.
 * docs/hosts.md is the table of what each does; the source lines behind each fact are cited here.
 */
import { resolve } from "node:path";
import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { MCPClient as MastraMCPClient } from "@mastra/mcp";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioClientTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { MCPServerStdio } from "@openai/agents-core";

export const BRIDGE_BIN = resolve(import.meta.dirname, "../../bin/chat-mcp-bridge.js");

/** The stdio server entry of a client config: `npx -y chat-mcp-bridge <url>` with the built bin for `npx`. */
export interface StdioServer {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The bridge as a host's config names it, with a private config dir and the file token store. */
export function bridgeServer(mcpUrl: string, env: Record<string, string>, flags: string[] = []): StdioServer {
  return {
    command: process.execPath,
    args: [BRIDGE_BIN, "--token-store", "file", ...flags, mcpUrl],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      DISPLAY: "",
      WAYLAND_DISPLAY: "",
      ...env,
    },
  };
}

export interface ToolOutcome {
  ok: boolean;
  /** The result's text, or the error the host raised. */
  text: string;
}

export interface RunningHost {
  /** The tool names of the host's first list, as its agent would get them. */
  readonly firstList: string[];
  /** Milliseconds from the host's start to that list. */
  readonly listedAfterMs: number;
  /** The tool names the host holds now (for hosts that follow `list_changed`; else the first list). */
  currentTools(): Promise<string[]>;
  call(name: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  /** Errors the host reported outside any request (the AI SDK's `onUncaughtError`). */
  readonly uncaught: string[];
  close(): Promise<void>;
}

export interface HostLibrary {
  name: string;
  /**
   * Lists tools again on every agent run (the OpenAI Agents SDK, `cacheToolsList` false by default:
   * node_modules/@openai/agents-core/dist/shims/mcp-server/node.mjs:313), so its first list may be empty as long as
   * it succeeds and the next run has the tools.
   */
  listsEveryRun?: boolean;
  /**
   * `longCalls`: the option a user sets for calls longer than the default time-out (docs/hosts.md's last column).
   * `requestTimeoutMs`: the library's default request time-out (60 s where it has one) scaled down, so a test proves
   * what that default does without waiting for it; a library with no default time-out (the AI SDK) ignores it.
   */
  start(server: StdioServer, options?: HostOptions): Promise<RunningHost>;
}

export interface HostOptions {
  longCalls?: boolean;
  requestTimeoutMs?: number;
}

/** Seconds a long call is allowed when the host has an option for it. */
export const LONG_CALL_TIMEOUT_MS = 180_000;

const outcome = async (work: () => Promise<unknown>): Promise<ToolOutcome> => {
  try {
    const result = (await work()) as { isError?: boolean; content?: unknown } | string | unknown[];
    const text = typeof result === "string" ? result : JSON.stringify(result);
    const isError =
      typeof result === "object" && result !== null && "isError" in result && result.isError === true;
    return { ok: !isError, text };
  } catch (error) {
    return { ok: false, text: error instanceof Error ? error.message : String(error) };
  }
};

/** The SDKs' per-request `timeout` standing in for their 60 s default, when the test scales it. */
const scaledTimeout = (options: HostOptions) =>
  options.requestTimeoutMs ? { timeout: options.requestTimeoutMs } : {};

const names = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name).sort();

/** Vercel AI SDK: `createMCPClient` with its stdio transport; `tools()` is what `generateText({ tools })` gets. */
const aiSdk: HostLibrary = {
  name: "AI SDK",
  async start(server) {
    const started = Date.now();
    const uncaught: string[] = [];
    const client = await createMCPClient({
      transport: new Experimental_StdioMCPTransport({ ...server, stderr: "ignore" }),
      onUncaughtError: (error) => uncaught.push(error instanceof Error ? error.message : String(error)),
    });
    const tools = await client.tools();
    const listedAfterMs = Date.now() - started;
    const firstList = Object.keys(tools).sort();
    return {
      firstList,
      listedAfterMs,
      uncaught,
      currentTools: async () => firstList,
      call: (name, args) =>
        outcome(async () => {
          const tool = tools[name];
          if (!tool?.execute) throw new Error(`${name} is not among the host's tools`);
          return tool.execute(args, { toolCallId: "call-1", messages: [], context: {} });
        }),
      close: () => client.close(),
    };
  },
};

/** OpenAI Agents SDK: `MCPServerStdio`; an agent lists its tools (`listTools`) on every run, calls `callTool`. */
const openAiAgents: HostLibrary = {
  name: "OpenAI Agents",
  listsEveryRun: true,
  async start(server, options = {}) {
    const started = Date.now();
    const mcp = new MCPServerStdio({
      command: server.command,
      args: server.args,
      env: server.env,
      // node_modules/@openai/agents-core/dist/shims/mcp-server/node.mjs:250: tools/call defaults to the SDK's 60 s;
      // :249: initialize and tools/list get 5 s, which a loaded machine starting many bridges at once can miss.
      ...(options.longCalls
        ? { timeout: LONG_CALL_TIMEOUT_MS, clientSessionTimeoutSeconds: 30 }
        : options.requestTimeoutMs
          ? { timeout: options.requestTimeoutMs }
          : {}),
    });
    // node.mjs:249: initialize and tools/list get `clientSessionTimeoutSeconds`, default 5.
    await mcp.connect().catch((error: unknown) => {
      throw new Error(`initialize failed: ${error instanceof Error ? error.message : String(error)}`);
    });
    const firstList = names(
      await mcp.listTools().catch((error: unknown) => {
        throw new Error(
          `the first tools/list failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }),
    );
    const listedAfterMs = Date.now() - started;
    return {
      firstList,
      listedAfterMs,
      uncaught: [],
      currentTools: async () => names(await mcp.listTools()),
      call: (name, args) => outcome(() => mcp.callTool(name, args)),
      close: () => mcp.close(),
    };
  },
};

/** Mastra: `new MCPClient({ servers })`; `listTools()` is what `new Agent({ tools })` gets (namespaced `chat_*`). */
const mastra: HostLibrary = {
  name: "Mastra",
  async start(server, options = {}) {
    const started = Date.now();
    const mcp = new MastraMCPClient({
      id: `mastra-${Math.random().toString(36).slice(2)}`,
      servers: { chat: { ...server, enableServerLogs: false } },
      // node_modules/@mastra/mcp/dist/index.js:24807: `timeout` (ms) for every request, default 60 s.
      ...(options.longCalls
        ? { timeout: LONG_CALL_TIMEOUT_MS }
        : options.requestTimeoutMs
          ? { timeout: options.requestTimeoutMs }
          : {}),
    });
    const tools = await mcp.listTools();
    const listedAfterMs = Date.now() - started;
    const strip = (key: string) => key.replace(/^chat_/, "");
    const firstList = Object.keys(tools).map(strip).sort();
    return {
      firstList,
      listedAfterMs,
      uncaught: [],
      currentTools: async () =>
        Object.keys(await mcp.listTools())
          .map(strip)
          .sort(),
      call: (name, args) =>
        outcome(async () => {
          const tool = tools[`chat_${name}`] as
            | { execute?: (input: unknown, context: unknown) => Promise<unknown> }
            | undefined;
          if (!tool?.execute) throw new Error(`${name} is not among the host's tools`);
          return tool.execute(args, {});
        }),
      close: () => mcp.disconnect(),
    };
  },
};

/** LangChain: `MultiServerMCPClient`; `getTools()` loads the tools once per connection, `tool.invoke` calls one. */
const langChain: HostLibrary = {
  name: "LangChain",
  async start(server, options = {}) {
    const started = Date.now();
    const client = new MultiServerMCPClient({
      mcpServers: { chat: { transport: "stdio", ...server } },
      // node_modules/@langchain/mcp-adapters/dist/tools.js:450: `defaultToolTimeout` (ms) becomes each call's timeout.
      ...(options.longCalls
        ? { defaultToolTimeout: LONG_CALL_TIMEOUT_MS }
        : options.requestTimeoutMs
          ? { defaultToolTimeout: options.requestTimeoutMs }
          : {}),
    });
    const tools = await client.getTools();
    const listedAfterMs = Date.now() - started;
    const firstList = names(tools);
    return {
      firstList,
      listedAfterMs,
      uncaught: [],
      currentTools: async () => names(await client.getTools()),
      call: (name, args) =>
        outcome(async () => {
          const tool = tools.find((candidate) => candidate.name === name);
          if (!tool) throw new Error(`${name} is not among the host's tools`);
          return tool.invoke(args);
        }),
      close: () => client.close(),
    };
  },
};

/** mcp-use (1.x, the last line with a client in the package): `MCPClient`, `createAllSessions`, `session.callTool`. */
const mcpUse: HostLibrary = {
  name: "mcp-use",
  async start(server, options = {}) {
    // Its telemetry (PostHog) is off: a test makes no network call.
    process.env.MCP_USE_ANONYMIZED_TELEMETRY = "false";
    const { MCPClient } = await import("mcp-use/client");
    const started = Date.now();
    const client = new MCPClient({ mcpServers: { chat: server } });
    await client.createAllSessions();
    const session = client.getSession("chat");
    if (!session) throw new Error("mcp-use made no session for the bridge");
    // node_modules/mcp-use/dist/chunk-NF3GBT4Z.js:296: the session's first tools/list, cached as `connector.tools`.
    const firstList = names(session.connector.tools);
    const listedAfterMs = Date.now() - started;
    return {
      firstList,
      listedAfterMs,
      uncaught: [],
      currentTools: async () => names(session.connector.tools),
      call: (name, args) =>
        outcome(() =>
          session.callTool(name, args, {
            ...scaledTimeout(options),
            ...(options.longCalls ? { resetTimeoutOnProgress: true } : {}),
          }),
        ),
      close: () => client.closeAllSessions(),
    };
  },
};

/** The MCP TypeScript SDK's v1 `Client` with its defaults (60 s per request), as Claude Desktop and others embed it. */
const sdkV1: HostLibrary = {
  name: "SDK v1 Client",
  async start(server, options = {}) {
    const started = Date.now();
    const client = new ClientV1({ name: "sdk-v1-host", version: "1.0.0" });
    await client.connect(new StdioClientTransportV1({ ...server, stderr: "ignore" }));
    const firstList = names((await client.listTools()).tools);
    const listedAfterMs = Date.now() - started;
    const longOptions = { resetTimeoutOnProgress: true, onprogress: () => {} };
    return {
      firstList,
      listedAfterMs,
      uncaught: [],
      currentTools: async () => names((await client.listTools()).tools),
      call: (name, args) =>
        outcome(() =>
          client.callTool({ name, arguments: args }, undefined, {
            ...scaledTimeout(options),
            ...(options.longCalls ? longOptions : {}),
          }),
        ),
      close: () => client.close(),
    };
  },
};

/** The SDK v2 client (`@modelcontextprotocol/client`), version negotiation `auto` as the OpenAI Agents SDK sets it. */
const sdkV2: HostLibrary = {
  name: "SDK v2 client",
  async start(server, options = {}) {
    const started = Date.now();
    const client = new ClientV2(
      { name: "sdk-v2-host", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    await client.connect(new StdioClientTransportV2({ ...server, stderr: "ignore" }));
    const firstList = names((await client.listTools()).tools);
    const listedAfterMs = Date.now() - started;
    const longOptions = { resetTimeoutOnProgress: true, onprogress: () => {} };
    return {
      firstList,
      listedAfterMs,
      uncaught: [],
      currentTools: async () => names((await client.listTools()).tools),
      call: (name, args) =>
        outcome(() =>
          client.callTool(
            { name, arguments: args },
            { ...scaledTimeout(options), ...(options.longCalls ? longOptions : {}) },
          ),
        ),
      close: () => client.close(),
    };
  },
};

/** The host libraries that stay connected (the Inspector CLI, one process per request, has its own helper). */
export const HOST_LIBRARIES: readonly HostLibrary[] = [
  aiSdk,
  openAiAgents,
  mastra,
  langChain,
  mcpUse,
  sdkV1,
  sdkV2,
];

export function hostLibrary(name: string): HostLibrary {
  const found = HOST_LIBRARIES.find((host) => host.name === name);
  if (!found) throw new Error(`no host library named ${name}`);
  return found;
}
