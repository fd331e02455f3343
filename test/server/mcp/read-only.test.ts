/** The reference server's read-only switch on `/mcp`: the write tools withdrawn and restored, each change announced to 2025 sessions and 2026-07-28 listeners. */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createInProcessReferenceServer } from "../../../src/testing/index.js";

const server = createInProcessReferenceServer({
  testOnlyUnauthenticatedMcpAccount: "acme",
  rateLimit: false,
});
afterEach(() => server.setReadOnly(false));
afterAll(() => server.close());

const WRITE_TOOLS = ["create_chat", "send_message", "resolve_task"];

async function connect(era: "legacy" | "modern") {
  const client = new Client(
    { name: `read-only-${era}`, version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { fetch: server.fetch }));
  expect(client.getProtocolEra()).toBe(era);
  const changes: number[] = [];
  client.setNotificationHandler("notifications/tools/list_changed", () => {
    changes.push(changes.length + 1);
  });
  return { client, changes };
}

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);

describe.each(["legacy", "modern"] as const)("a %s client while the server goes read-only", (era) => {
  it("is told the list changed, lists no write tool, cannot call one, and gets them back", async () => {
    const { client, changes } = await connect(era);
    const subscription = era === "modern" ? await client.listen({ toolsListChanged: true }) : undefined;
    try {
      expect(await toolNames(client)).toEqual(expect.arrayContaining(WRITE_TOOLS));
      server.setReadOnly(true);
      // One change of the list, one notification (three tools withdrawn); turning it on again changes nothing.
      await expect.poll(() => changes.length).toBe(1);
      server.setReadOnly(true);
      const listed = await toolNames(client);
      for (const name of WRITE_TOOLS) expect(listed).not.toContain(name);
      expect(listed).toEqual(
        expect.arrayContaining(["list_chats", "get_chat", "list_messages", "get_preview"]),
      );
      await expect(
        client.callTool({ name: "send_message", arguments: { chatId: "c", message: "m" } }),
      ).rejects.toThrow(/disabled/);

      const seen = changes.length;
      server.setReadOnly(false);
      await expect.poll(() => changes.length).toBe(seen + 1);
      expect(await toolNames(client)).toEqual(expect.arrayContaining(WRITE_TOOLS));
      expect(changes).toHaveLength(2);
    } finally {
      await subscription?.close();
      await client.close();
    }
  });
});
