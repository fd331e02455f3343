/** The reference server's MCP extensions in both eras, through SDK v2 clients (no port): input schemas any host loads, Skills, the preview App, Tasks. */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import { startInProcessTestServer } from "../oauth/helpers.js";

const MODERN = "2026-07-28";
type Era = "modern" | "legacy";

let server: ReferenceServer;

beforeAll(() => {
  server = startInProcessTestServer({ testOnlyUnauthenticatedMcpAccount: "acme" });
});
afterAll(() => server?.close());

async function connect(era: Era, capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client(
    { name: `ext-${era}`, version: "1.0.0" },
    { capabilities, ...(era === "modern" ? { versionNegotiation: { mode: { pin: MODERN } } } : {}) },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl)));
  return client;
}

describe.each(["modern", "legacy"] as const)("a %s client", (era) => {
  it("gets tool input schemas without a $schema key (Genkit's validator refuses one)", async () => {
    const client = await connect(era);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(7);
    for (const tool of tools) {
      expect(tool.inputSchema).not.toHaveProperty("$schema");
      expect(tool.inputSchema.type).toBe("object");
    }
    await client.close();
  });
});

describe.each(["modern", "legacy"] as const)("Skills for a %s agent", (era) => {
  it("lists the integration flow and reads a SKILL.md that walks through every step", async () => {
    const client = await connect(era);
    const skills = new SkillsClient(client);
    expect(skills.supported).toBe(true);
    const listing = await skills.list();
    expect(listing.invalid).toEqual([]);
    expect(listing.skills.map((skill) => skill.frontmatter.name)).toEqual(["chat-integration-flow"]);
    const [skill] = listing.skills;
    const got = await skills.get(skill!.uri);
    expect(got.skill.uri).toBe(skill!.uri);
    const file = await skills.read(skill!);
    expect(file.verified).toBe(true);
    const text = file.text ?? "";
    const steps = [
      "create_chat",
      "get_or_request_integration",
      "requestedIntegrations",
      "requestedMcpPresets",
      "hostProjectId",
      "confirmed-steps",
      "suggestedPermissions",
      "confirmed-permissions",
      "get_preview",
    ];
    const at = steps.map((step) => text.indexOf(step));
    expect(at.every((index) => index >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(text).toMatch(/no `hostProjectId`,\s+stop/);
    await client.close();
  });
});

describe.each(["modern", "legacy"] as const)(
  "the preview App for a %s host that declares the UI extension",
  (era) => {
    it("get_preview names a ui:// resource served as text/html;profile=mcp-app with its CSP", async () => {
      const client = await connect(era, {
        extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
      });
      const { tools } = await client.listTools();
      const preview = tools.find((tool) => tool.name === "get_preview");
      const uri = (preview?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
      expect(uri).toMatch(/^ui:\/\//);
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri)).toContain(uri);
      const read = await client.readResource({ uri: uri! });
      const [content] = read.contents as Array<{
        uri: string;
        mimeType?: string;
        text?: string;
        _meta?: { ui?: { csp?: { frameDomains?: string[] } } };
      }>;
      expect(content?.mimeType).toBe("text/html;profile=mcp-app");
      expect(content?.text).toContain("ui/notifications/tool-result");
      expect(content?._meta?.ui?.csp?.frameDomains).toEqual([new URL(server.url).origin]);

      const chat = (await client.callTool({ name: "create_chat", arguments: { message: "hello" } }))
        .structuredContent as { id: string };
      const shown = (await client.callTool({ name: "get_preview", arguments: { chatId: chat.id } }))
        .structuredContent as { url: string };
      expect(shown.url).toBe(`${server.url}/acme/chats/${chat.id}/preview`);
      await client.close();
    });
  },
);

/** One raw 2026-07-28 request (the SDK v2 client has no task runtime): its envelope, its standard headers. */
async function modernCall(
  target: ReferenceServer,
  method: string,
  params: Record<string, unknown>,
  options: { tasks?: boolean; headers?: Record<string, string> } = {},
): Promise<{ status: number; result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const name = params.name ?? params.taskId;
  const response = await fetch(target.mcpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
      ...(typeof (params.arguments as { chatId?: unknown } | undefined)?.chatId === "string"
        ? { "mcp-param-chatid": (params.arguments as { chatId: string }).chatId }
        : {}),
      ...options.headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "raw-2026-host", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": options.tasks
            ? { extensions: { "io.modelcontextprotocol/tasks": {} } }
            : {},
        },
      },
    }),
  });
  const text = await response.text();
  const json = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ? JSON.parse(
        text
          .split("\n")
          .filter((line) => line.startsWith("data:") && line.includes('"id"'))
          .map((line) => line.slice(5))[0] ?? "{}",
      )
    : JSON.parse(text);
  return { status: response.status, ...json };
}

describe("Tasks, 2026-07-28 extension (a slow assistant)", () => {
  let slow: ReferenceServer;
  beforeAll(() => {
    slow = startInProcessTestServer({
      testOnlyUnauthenticatedMcpAccount: "acme",
      assistantDelayMs: 400,
      url: "http://127.0.0.1:48123",
    });
  });
  afterAll(() => slow?.close());

  it("server/discover advertises the extension and no 2025 capabilities.tasks", async () => {
    const discover = await modernCall(slow, "server/discover", {});
    const capabilities = discover.result?.capabilities as Record<string, Record<string, unknown>>;
    expect(capabilities.extensions).toHaveProperty(["io.modelcontextprotocol/tasks"]);
    expect(capabilities).not.toHaveProperty("tasks");
  });

  it("create_chat answers a task, tasks/get polls it to completed with the chat as its result", async () => {
    const created = await modernCall(
      slow,
      "tools/call",
      { name: "create_chat", arguments: { message: "hello as a task" } },
      { tasks: true },
    );
    expect(created.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = String(created.result?.taskId);
    let polled = await modernCall(slow, "tasks/get", { taskId });
    expect(polled.result).toMatchObject({ resultType: "complete", taskId, status: "working" });
    while (polled.result?.status === "working") {
      await new Promise((resolve) => setTimeout(resolve, 50));
      polled = await modernCall(slow, "tasks/get", { taskId });
    }
    expect(polled.result?.status).toBe("completed");
    const done = polled.result?.result as { structuredContent?: { id?: string; url?: string } } | undefined;
    const chat = done?.structuredContent;
    expect(chat?.url).toContain(`/acme/chats/${chat?.id}`);
  });

  it("a host without the extension gets today's answer", async () => {
    const plain = await modernCall(slow, "tools/call", {
      name: "create_chat",
      arguments: { message: "plain" },
    });
    expect(plain.result).toMatchObject({ resultType: "complete" });
    expect((plain.result?.structuredContent as { id?: string } | undefined)?.id).toBeTruthy();
  });

  it("tasks/cancel ends the task as cancelled; tasks/get without Mcp-Name is refused (SEP-2663)", async () => {
    const created = await modernCall(
      slow,
      "tools/call",
      { name: "create_chat", arguments: { message: "cancel me" } },
      { tasks: true },
    );
    const taskId = String(created.result?.taskId);
    expect((await modernCall(slow, "tasks/cancel", { taskId })).result).toMatchObject({
      resultType: "complete",
    });
    expect((await modernCall(slow, "tasks/get", { taskId })).result?.status).toBe("cancelled");
    const refused = await modernCall(slow, "tasks/get", { taskId }, { headers: { "mcp-name": "other" } });
    expect(refused.status).toBe(400);
    const unknown = await modernCall(slow, "tasks/get", { taskId: "no-such-task" });
    expect(unknown.error?.code).toBe(-32602);
  });
});

describe("Tasks, 2025-11-25 core, with the SDK v1 client (a slow assistant)", () => {
  let slow: ReferenceServer;
  beforeAll(() => {
    slow = startInProcessTestServer({
      testOnlyUnauthenticatedMcpAccount: "acme",
      assistantDelayMs: 400,
      url: "http://127.0.0.1:48124",
    });
  });
  afterAll(() => slow?.close());

  async function v1Client(): Promise<V1Client> {
    const client = new V1Client({ name: "v1-host", version: "1" }, { capabilities: {} });
    await client.connect(new V1Transport(new URL(slow.mcpUrl)));
    return client;
  }

  it("callToolStream creates a task, polls it and gets the chat (tasks/get, tasks/result)", async () => {
    const client = await v1Client();
    expect(client.getServerCapabilities()?.tasks?.requests?.tools?.call).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === "create_chat")?.execution?.taskSupport).toBe("optional");
    const seen: string[] = [];
    let chat: { id?: string } | undefined;
    for await (const message of client.experimental.tasks.callToolStream({
      name: "create_chat",
      arguments: { message: "hello from 2025" },
    })) {
      seen.push(message.type);
      if (message.type === "result") chat = message.result.structuredContent as { id?: string };
    }
    expect(seen[0]).toBe("taskCreated");
    expect(seen.at(-1)).toBe("result");
    expect(chat?.id).toBeTruthy();
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.some((task) => task.status === "completed")).toBe(true);
    await client.close();
  });

  it("tasks/cancel cancels a working task; a call without `task` gets today's answer", async () => {
    const client = await v1Client();
    await client.listTools();
    const plain = await client.callTool({ name: "create_chat", arguments: { message: "plain" } });
    expect((plain.structuredContent as { id?: string }).id).toBeTruthy();
    const created = await client.request(
      { method: "tools/call", params: { name: "create_chat", arguments: { message: "x" }, task: {} } },
      CreateTaskResultSchema,
    );
    const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
    expect(cancelled.status).toBe("cancelled");
    await client.close();
  });
});
