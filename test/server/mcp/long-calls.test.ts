/** `/mcp` while the assistant is slow: progress on every call that waits for it, and a cancelled call that writes nothing; through the server's handler (no port). */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confirmedStepsFor, type Message, pendingTaskOf } from "../../../src/wire/index.js";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../../support/reference-request.js";

/** Long enough for a few progress steps, short enough for a unit test. */
const ASSISTANT_MS = 600;

type Era = "modern" | "legacy";
interface Step {
  progress: number;
  total?: number;
  message?: string;
}

let server: RequestableReferenceServer;
beforeAll(() => {
  server = createRequestableReferenceServer({
    assistantDelayMs: ASSISTANT_MS,
    testOnlyUnauthenticatedMcpAccount: "acme",
  });
});
afterAll(() => server?.close());

async function connect(era: Era): Promise<Client> {
  const client = new Client(
    { name: `long-calls-${era}`, version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { fetch: server.fetch }));
  return client;
}

function structured<T>(result: Awaited<ReturnType<Client["callTool"]>>): T {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as T;
}

// The cases wait on the assistant's clock, not on each other (own clients, own chats): they run side by side.
describe.concurrent.each(["modern", "legacy"] as const)("a %s client", (era) => {
  it("resolve_task reports the assistant's steps as progress, the wait on the integrations among them", async () => {
    const client = await connect(era);
    try {
      const chat = structured<{ id: string }>(
        await client.callTool({ name: "create_chat", arguments: { message: "Please set up a Database" } }),
      );
      const page = structured<{ data: Message[] }>(
        await client.callTool({ name: "list_messages", arguments: { chatId: chat.id } }),
      );
      const pending = pendingTaskOf(page.data.find((message) => message.role === "assistant"));
      if (pending?.kind !== "integration") throw new Error("expected the chat to wait for integrations");
      const steps: Step[] = [];
      structured<Message>(
        await client.callTool(
          { name: "resolve_task", arguments: { chatId: chat.id, task: confirmedStepsFor(pending) } },
          { onprogress: (step) => steps.push(step) },
        ),
      );
      expect(steps.length).toBeGreaterThanOrEqual(3);
      expect(steps.map((step) => step.message)).toContain("The assistant is waiting on the integrations");
      expect(steps.every((step) => step.total === ASSISTANT_MS)).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("a create_chat the client cancels while the assistant thinks writes nothing: run again, it exists once", async () => {
    const client = await connect(era);
    try {
      const title = `cancelled ${era} ${Date.now()}`;
      const cancel = new AbortController();
      const cancelled = client.callTool(
        { name: "create_chat", arguments: { message: "Hello", title } },
        {
          signal: cancel.signal,
          // The first step says the server is working on it: the cancellation arrives while the assistant thinks.
          onprogress: () => cancel.abort(new Error("the person stopped it")),
        },
      );
      await expect(cancelled).rejects.toThrow();
      // Run again: started later, it ends after the cancelled one would have written its chat.
      structured(await client.callTool({ name: "create_chat", arguments: { message: "Hello", title } }));
      const listed = structured<{ data: Array<{ title: string }> }>(
        await client.callTool({ name: "list_chats", arguments: { topic: title } }),
      );
      expect(listed.data.map((chat) => chat.title)).toEqual([title]);
    } finally {
      await client.close();
    }
  });
});
