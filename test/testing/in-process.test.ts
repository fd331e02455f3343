/** `createInProcessReferenceServer()`: the same fetch handler as `startReferenceServer()`, called without a port. */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { createInProcessReferenceServer } from "../../src/testing/index.js";
import { pendingTaskOf } from "../../src/wire/index.js";

const server = createInProcessReferenceServer({
  testOnlyUnauthenticatedMcpAccount: "acme",
  rateLimit: false,
});
afterAll(() => server.close());

describe("the whole server in-process", () => {
  it("serves /v2 to a ChatClient through its fetch", async () => {
    const client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme, fetch: server.fetch });
    const chat = await client.createChat({ message: "I need a database" });
    expect(chat.url).toContain("/acme/");
    expect((await client.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("answers unknown paths with the JSON error body", async () => {
    const response = await server.fetch(`${server.url}/nope`);
    expect(response.status).toBe(404);
    expect((await response.json()).error.code).toBe("not_found");
  });

  it("serves /mcp to a modern SDK v2 client, and delivers tools/list_changed on subscriptions/listen", async () => {
    const client = new Client(
      { name: "in-process", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { fetch: server.fetch }));
    expect(client.getProtocolEra()).toBe("modern");
    const created = (await client.callTool({
      name: "create_chat",
      arguments: { message: "track issues" },
    })) as {
      structuredContent: { id: string };
    };
    const listed = (await client.callTool({
      name: "list_messages",
      arguments: { chatId: created.structuredContent.id },
    })) as { structuredContent: { data: Array<{ role: string }> } };
    const latest = listed.structuredContent.data.find((message) => message.role === "assistant");
    expect(pendingTaskOf(latest as never)?.kind).toBe("integration");

    const changed = new Promise<void>((resolve) => {
      client.setNotificationHandler("notifications/tools/list_changed", () => resolve());
    });
    const subscription = await client.listen({ toolsListChanged: true });
    server.toolsChanged();
    await changed;
    await subscription.close();
    await client.close();
  });
});

describe("fetchFrom(clientAddress)", () => {
  it("is another client to the per-client limits: one address refused, another still served", async () => {
    const limited = createInProcessReferenceServer({
      oauthRateLimit: { register: { capacity: 1, refillPerSecond: 0.001 } },
    });
    try {
      const register = async (send: typeof server.fetch) => {
        const response = await send(`${limited.url}/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            client_name: "one of two",
            redirect_uris: ["http://127.0.0.1:33418/callback"],
            token_endpoint_auth_method: "none",
          }),
        });
        await response.body?.cancel();
        return response.status;
      };
      expect(await register(limited.fetch)).toBe(201);
      expect(await register(limited.fetchFrom("127.0.0.1"))).toBe(429);
      expect(await register(limited.fetchFrom("192.0.2.7"))).toBe(201);
    } finally {
      await limited.close();
    }
  });
});
