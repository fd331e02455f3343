/** The relay over the reference server's fetch handler: sign-in, tools, calls and notifications, with no socket (the unit project's guard would fail a listen). */
import { afterEach, describe, expect, it } from "vitest";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../support/reference-request.js";
import { connectThroughRelayInProcess, type InProcessBridgeClient } from "../support/relay-in-process.js";

let server: RequestableReferenceServer | undefined;
let bridge: InProcessBridgeClient | undefined;
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
  await server?.close();
  server = undefined;
});

function structured<T>(result: { structuredContent?: unknown; isError?: boolean; content?: unknown }): T {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as T;
}

describe("the relay with the in-process reference server's fetch as its network", () => {
  it("signs in (device grant, approved for the account), lists the tools and relays a call", async () => {
    // Approved at once, polled at once: the sign-in takes no wall-clock time.
    server = createRequestableReferenceServer({
      autoApprove: "acme",
      deviceAuthorization: { intervalSeconds: 0 },
    });
    const requests: string[] = [];
    const fetch: typeof globalThis.fetch = (input, init) => {
      const request = new Request(input, init);
      requests.push(`${request.method} ${new URL(request.url).pathname}`);
      return server!.fetch(request);
    };
    bridge = await connectThroughRelayInProcess(["--device-code", server.mcpUrl], { fetch });
    const { tools } = await bridge.client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("create_chat");
    const chat = structured<{ id: string; title: string }>(
      await bridge.client.callTool({ name: "create_chat", arguments: { message: "Hello from no port" } }),
    );
    expect(chat.id).toMatch(/^chat_/);
    // The call ran on the account the sign-in was approved for: its chat is listed there, over /v2.
    const listed = await server.request("/v2/chats", {
      headers: { authorization: `Bearer ${server.apiKeys.acme}` },
    });
    expect(((await listed.json()) as { data: Array<{ id: string }> }).data.map((c) => c.id)).toContain(
      chat.id,
    );
    // Every step of the sign-in and the relay went through the given fetch.
    expect(requests).toEqual(
      expect.arrayContaining([
        "GET /.well-known/oauth-protected-resource/mcp",
        "POST /device_authorization",
        "POST /token",
        "POST /mcp",
      ]),
    );
  });

  it("relays the server's tools/list_changed to the client", async () => {
    server = createRequestableReferenceServer({ testOnlyUnauthenticatedMcpAccount: "acme" });
    bridge = await connectThroughRelayInProcess([server.mcpUrl], { fetch: server.fetch });
    await bridge.client.listTools();
    const changed = new Promise<void>((resolve) => {
      bridge?.client.setNotificationHandler(
        // biome-ignore lint/suspicious/noExplicitAny: the SDK's schema-keyed overload
        "notifications/tools/list_changed" as any,
        () => resolve(),
      );
    });
    server.setReadOnly(true);
    server.toolsChanged();
    await changed;
    const { tools } = await bridge.client.listTools();
    expect(tools.map((tool) => tool.name)).not.toContain("create_chat");
  });
});
