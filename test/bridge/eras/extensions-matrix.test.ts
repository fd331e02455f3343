/**
 * The extensions matrix: Apps, Skills, Tasks, capability negotiation and unknown methods, for each era pair (a 2025
 * host and a 2026 host, each over the reference server serving 2025, 2026 or both), directly and through the
 * in-process bridge with and without its flags. Every cell that holds directly must hold through the bridge.
 * The hosts are the SDKs' own clients (v2 in each era; v1 for 2025 tasks, since v2 has no task runtime) and, for
 * 2026 tasks, a raw JSON-RPC host (no SDK has a runtime for the 2026-07-28 Tasks extension).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport as V1TransportType } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import type { McpEra } from "../../../src/server/index.js";
import { startInProcessTestServer } from "../../server/oauth/helpers.js";
import type { RequestableReferenceServer } from "../../support/reference-request.js";
import {
  type InProcessRelay,
  InProcessRelayTransport,
  startRelayInProcess,
} from "../../support/relay-in-process.js";

const MODERN = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const UI = "io.modelcontextprotocol/ui";
type HostEra = "2025" | "2026";
/** How a host reaches the server: directly, or through the bridge with these flags. */
type Route = { direct: true } | { flags: string[] };

const ROUTES: Array<[string, Route]> = [
  ["directly", { direct: true }],
  ["through the bridge", { flags: [] }],
  ["through the bridge --read-only", { flags: ["--read-only"] }],
  ["through the bridge --ignore-tool list_chats", { flags: ["--ignore-tool", "list_chats"] }],
  ["through the bridge --confirm-tool resolve_task", { flags: ["--confirm-tool", "resolve_task"] }],
];
const SERVER_ERAS: Array<[string, McpEra]> = [
  ["a 2025 server", "legacy"],
  ["a 2026 server", "modern"],
  ["a dual-era server", "both"],
];

/** Whether the pair connects at all directly: a host of one era cannot reach a server of only the other. */
function connectsDirectly(host: HostEra, server: McpEra): boolean {
  return server === "both" || (host === "2025") === (server === "legacy");
}

let port = 48200;

interface Party {
  /** An SDK v2 client in the host's era. */
  v2(capabilities?: Record<string, unknown>): Promise<Client>;
  /** The 2025 host with a task runtime: the SDK v1 client. */
  v1(): Promise<V1Client>;
  /** One raw 2026-07-28 request (envelope included), answered. */
  modern(method: string, params: Record<string, unknown>, tasks?: boolean): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

function envelope(tasks: boolean): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": { name: "raw-2026-host", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { [TASKS]: {} } } : {},
  };
}

async function party(server: RequestableReferenceServer, host: HostEra, route: Route): Promise<Party> {
  const relays: InProcessRelay[] = [];
  const closers: Array<() => Promise<void>> = [];
  const relay = async () => {
    if ("direct" in route) throw new Error("no relay directly");
    const started = await startRelayInProcess([...route.flags, server.mcpUrl], {}, { fetch: server.fetch });
    relays.push(started);
    return started;
  };
  const v2 = async (capabilities: Record<string, unknown> = {}) => {
    const client = new Client(
      { name: `matrix-${host}`, version: "1.0.0" },
      {
        capabilities: { elicitation: { form: {} }, ...capabilities },
        ...(host === "2026" ? { versionNegotiation: { mode: { pin: MODERN } } } : {}),
      },
    );
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { approve: true },
    }));
    await client.connect(
      "direct" in route
        ? new StreamableHTTPClientTransport(new URL(server.mcpUrl))
        : new InProcessRelayTransport(await relay()),
    );
    closers.push(() => client.close());
    return client;
  };
  const v1 = async () => {
    const client = new V1Client({ name: "matrix-v1", version: "1" }, { capabilities: {} });
    const transport =
      "direct" in route
        ? new V1Transport(new URL(server.mcpUrl))
        : (new InProcessRelayTransport(await relay()) as unknown as V1TransportType);
    await client.connect(transport);
    closers.push(() => client.close());
    return client;
  };
  let raw: InProcessRelay | undefined;
  let nextId = 1;
  const modern = async (method: string, params: Record<string, unknown>, tasks = false) => {
    const id = nextId++;
    const body = { jsonrpc: "2.0", id, method, params: { ...params, _meta: envelope(tasks) } };
    if (!("direct" in route)) {
      raw ??= await relay();
      raw.send(JSON.stringify(body));
      return raw.waitFor((message) => message.id === id, 10_000);
    }
    const name = params.name ?? params.taskId ?? params.uri;
    const chatId = (params.arguments as { chatId?: unknown } | undefined)?.chatId;
    const response = await fetch(server.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        ...(typeof name === "string" ? { "mcp-name": name } : {}),
        ...(typeof chatId === "string" ? { "mcp-param-chatid": chatId } : {}),
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const data = text.includes("data:")
      ? (text
          .split("\n")
          .filter((line) => line.startsWith("data:") && line.includes('"id"'))
          .map((line) => line.slice(5))[0] ?? "{}")
      : text;
    return JSON.parse(data) as Record<string, unknown>;
  };
  return {
    v2,
    v1,
    modern,
    close: async () => {
      for (const close of closers) await close().catch(() => undefined);
      for (const started of relays) await started.end().catch(() => 0);
    },
  };
}

/** A 2026 host's long create_chat as a task: created, polled with tasks/get to completed, the chat its result. */
async function modernTask(host: Party): Promise<{ id?: string } | "no task"> {
  const created = await host.modern(
    "tools/call",
    { name: "create_chat", arguments: { message: "a long one, as a task" } },
    true,
  );
  const result = created.result as Record<string, unknown> | undefined;
  expect(created.error).toBeUndefined();
  if (result?.resultType !== "task") return "no task";
  const taskId = String(result.taskId);
  for (let polls = 0; polls < 200; polls++) {
    const polled = await host.modern("tasks/get", { taskId });
    const task = polled.result as Record<string, unknown> | undefined;
    expect(polled.error, JSON.stringify(polled.error)).toBeUndefined();
    if (task?.status === "completed") {
      return (task.result as { structuredContent?: { id?: string } }).structuredContent ?? {};
    }
    expect(task?.status).toBe("working");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the task never completed");
}

describe.each(SERVER_ERAS)("%s", (_, mcpEra) => {
  let server: RequestableReferenceServer;
  beforeAll(() => {
    server = startInProcessTestServer({
      testOnlyUnauthenticatedMcpAccount: "acme",
      assistantDelayMs: 300,
      mcpEra,
      url: `http://127.0.0.1:${port++}`,
    });
  });
  afterAll(() => server?.close());

  describe.each(["2025", "2026"] as const)("a %s host", (host) => {
    // A pair that cannot connect directly has no direct cells: the bridge is what joins it.
    const routes = ROUTES.filter(([, route]) => !("direct" in route) || connectsDirectly(host, mcpEra));
    describe.each(routes)("%s", (_route, route) => {
      const direct = "direct" in route;
      const flags = direct ? [] : route.flags;
      const readOnly = flags.includes("--read-only");
      const cell = it;
      let hostParty: Party;
      beforeAll(async () => {
        hostParty = await party(server, host, route);
      });
      afterAll(() => hostParty?.close());

      cell("capability negotiation: extensions declared, tasks in the host's own era's words", async () => {
        const client = await hostParty.v2();
        const capabilities = client.getServerCapabilities() as Record<string, Record<string, unknown>>;
        expect(capabilities.extensions).toHaveProperty(["io.modelcontextprotocol/skills"]);
        if (host === "2026") {
          // The 2025-only member never reaches a 2026 host; the extension only where a 2026 server serves it.
          expect(capabilities).not.toHaveProperty("tasks");
          expect(TASKS in (capabilities.extensions ?? {})).toBe(mcpEra !== "legacy");
        } else {
          // A 2025 host reads the core's words, from a 2025 server or translated from the 2026 extension.
          expect(capabilities.tasks?.requests).toBeDefined();
        }
      });

      cell(
        "Apps: get_preview names its ui:// App, served as text/html;profile=mcp-app with its CSP",
        async () => {
          const client = await hostParty.v2({
            extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } },
          });
          const { tools } = await client.listTools();
          const uri = (
            tools.find((tool) => tool.name === "get_preview")?._meta?.ui as { resourceUri?: string }
          )?.resourceUri;
          expect(uri).toMatch(/^ui:\/\//);
          const read = await client.readResource({ uri: String(uri) });
          const [content] = read.contents as Array<{ mimeType?: string; _meta?: { ui?: { csp?: unknown } } }>;
          expect(content?.mimeType).toBe("text/html;profile=mcp-app");
          expect(content?._meta?.ui?.csp).toMatchObject({ frameDomains: [new URL(server.url).origin] });
        },
      );

      cell("Skills: an agent lists the integration flow, gets it and reads a verified SKILL.md", async () => {
        const skills = new SkillsClient(await hostParty.v2());
        const listing = await skills.list();
        expect(listing.skills.map((skill) => skill.frontmatter.name)).toEqual(["chat-integration-flow"]);
        const [skill] = listing.skills;
        expect((await skills.get(String(skill?.uri))).skill.uri).toBe(skill?.uri);
        const file = await skills.read(skill!);
        expect(file.verified).toBe(true);
        expect(file.text).toContain("confirmed-permissions");
      });

      cell("unknown methods are answered Method not found", async () => {
        if (host === "2026") {
          const answer = await hostParty.modern("acme/unknown", {});
          expect((answer.error as { code?: number } | undefined)?.code).toBe(-32601);
        } else {
          const client = await hostParty.v1();
          await expect(
            client.request({ method: "acme/unknown", params: {} }, z.object({})),
          ).rejects.toMatchObject({
            code: -32601,
          });
        }
      });

      cell(
        "Tasks: a long create_chat runs as a task where the pair can finish one, else answers at once",
        async () => {
          if (host === "2026") {
            if (readOnly) {
              const { tools } = await (await hostParty.v2()).listTools();
              expect(tools.map((tool) => tool.name)).not.toContain("create_chat");
              return;
            }
            const outcome = await modernTask(hostParty);
            // A 2026 host over a 2025 server is offered no tasks: the call answers at once.
            if (mcpEra === "legacy") expect(outcome).toBe("no task");
            else expect(outcome).toMatchObject({ id: expect.any(String) });
            return;
          }
          const client = await hostParty.v1();
          const { tools } = await client.listTools();
          const createChat = tools.find((tool) => tool.name === "create_chat");
          if (readOnly) {
            expect(createChat).toBeUndefined();
            return;
          }
          expect(createChat?.execution?.taskSupport).toBe("optional");
          const seen: string[] = [];
          let chat: { id?: string } | undefined;
          for await (const message of client.experimental.tasks.callToolStream({
            name: "create_chat",
            arguments: { message: "a long one, as a task" },
          })) {
            seen.push(message.type);
            if (message.type === "result") chat = message.result.structuredContent as { id?: string };
            if (message.type === "error") throw message.error;
          }
          expect(seen[0]).toBe("taskCreated");
          expect(chat?.id).toEqual(expect.any(String));
        },
      );
    });
  });
});

describe("a host cancels its task through the bridge (dual-era server, an assistant that would take 20 s)", () => {
  let server: RequestableReferenceServer;
  beforeAll(() => {
    server = startInProcessTestServer({
      testOnlyUnauthenticatedMcpAccount: "acme",
      assistantDelayMs: 20_000,
      url: `http://127.0.0.1:${port++}`,
    });
  });
  afterAll(() => server?.close());

  it("a 2026 host: tasks/cancel (Mcp-Name = taskId), then tasks/get says cancelled", async () => {
    const host = await party(server, "2026", { flags: [] });
    try {
      const created = await host.modern(
        "tools/call",
        { name: "create_chat", arguments: { message: "never mind" } },
        true,
      );
      const taskId = String((created.result as { taskId?: string }).taskId);
      expect((await host.modern("tasks/cancel", { taskId })).result).toMatchObject({
        resultType: "complete",
      });
      expect(((await host.modern("tasks/get", { taskId })).result as { status?: string }).status).toBe(
        "cancelled",
      );
    } finally {
      await host.close();
    }
  });

  it("a 2025 host (SDK v1): tasks/cancel answers the cancelled task, translated from the 2026 extension", async () => {
    const host = await party(server, "2025", { flags: [] });
    try {
      const client = await host.v1();
      const created = await client.request(
        {
          method: "tools/call",
          params: { name: "create_chat", arguments: { message: "never mind" }, task: {} },
        },
        CreateTaskResultSchema,
      );
      expect(created.task.status).toBe("working");
      const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
      expect(cancelled).toMatchObject({ taskId: created.task.taskId, status: "cancelled" });
      await expect(
        client.experimental.tasks.getTaskResult(created.task.taskId, z.object({})),
      ).rejects.toThrow(/cancelled/i);
    } finally {
      await host.close();
    }
  });
});
