/** `/mcp` while the assistant is slow: progress on every call that waits for it, and a cancelled call that writes nothing; through the server's handler (no port), on a fake clock. */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { confirmedStepsFor, type Message, pendingTaskOf } from "../../../src/wire/index.js";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../../support/reference-request.js";

/** The assistant's thinking time: passed on the fake clock, so any length costs nothing. */
const ASSISTANT_MS = 600;

type Era = "modern" | "legacy";
interface Step {
  progress: number;
  total?: number;
  message?: string;
}

let server: RequestableReferenceServer;
beforeAll(() => {
  // The assistant's wait and heartbeat and the clock its progress is measured by; promises and streams stay real.
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  server = createRequestableReferenceServer({
    assistantDelayMs: ASSISTANT_MS,
    testOnlyUnauthenticatedMcpAccount: "acme",
  });
});
afterAll(async () => {
  await server?.close();
  vi.useRealTimers();
});

/**
 * Runs a call that waits for the assistant: once its first progress step says the assistant has started, the fake
 * clock moves on by the whole thinking time (each heartbeat on the way), and the call's answer is awaited.
 */
async function pastThinking<T>(call: (onprogress: (step: Step) => void) => Promise<T>): Promise<T> {
  let started!: () => void;
  const thinking = new Promise<void>((resolve) => {
    started = resolve;
  });
  const answer = call(() => started());
  await Promise.race([thinking, answer]);
  await vi.advanceTimersByTimeAsync(ASSISTANT_MS);
  return answer;
}

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

// One case at a time: they share the fake clock.
describe.each(["modern", "legacy"] as const)("a %s client", (era) => {
  it("resolve_task reports the assistant's steps as progress, the wait on the integrations among them", async () => {
    const client = await connect(era);
    try {
      const chat = structured<{ id: string }>(
        await pastThinking((onprogress) =>
          client.callTool(
            { name: "create_chat", arguments: { message: "Please set up a Database" } },
            { onprogress },
          ),
        ),
      );
      const page = structured<{ data: Message[] }>(
        await client.callTool({ name: "list_messages", arguments: { chatId: chat.id } }),
      );
      const pending = pendingTaskOf(page.data.find((message) => message.role === "assistant"));
      if (pending?.kind !== "integration") throw new Error("expected the chat to wait for integrations");
      const steps: Step[] = [];
      structured<Message>(
        await pastThinking((onprogress) =>
          client.callTool(
            { name: "resolve_task", arguments: { chatId: chat.id, task: confirmedStepsFor(pending) } },
            {
              onprogress: (step) => {
                steps.push(step);
                onprogress(step);
              },
            },
          ),
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
      structured(
        await pastThinking((onprogress) =>
          client.callTool({ name: "create_chat", arguments: { message: "Hello", title } }, { onprogress }),
        ),
      );
      const listed = structured<{ data: Array<{ title: string }> }>(
        await client.callTool({ name: "list_chats", arguments: { topic: title } }),
      );
      expect(listed.data.map((chat) => chat.title)).toEqual([title]);
    } finally {
      await client.close();
    }
  });
});
