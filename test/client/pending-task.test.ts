/** Flow helpers: what the latest assistant message waits for, and resolving it with the right task. */
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import {
  findIntegrationRequest,
  findPendingPermissions,
  type Message,
  NoPendingTaskError,
} from "../../src/index.js";
import {
  BASE_URL,
  chat,
  integrationPause,
  message,
  permissionPause,
  SETUP_DB_PERMISSION,
  testClient,
  useMockService,
} from "./fixtures.js";

const server = useMockService();

/** Serves `newestFirst` as the chat's messages (the chat with a hosting project) and records every resolve body. */
function chatWithMessages(newestFirst: Message[]) {
  const resolved: unknown[] = [];
  server.use(
    http.get(`${BASE_URL}/v2/chats/chat_1`, () => HttpResponse.json(chat())),
    http.get(`${BASE_URL}/v2/chats/chat_1/messages`, () =>
      HttpResponse.json({ object: "list", data: newestFirst, nextCursor: null }),
    ),
    http.post(`${BASE_URL}/v2/chats/chat_1/messages/resolve`, async ({ request }) => {
      resolved.push(await request.json());
      return HttpResponse.json(message());
    }),
  );
  return resolved;
}

const user = (text: string) =>
  message({ role: "user", content: text, parts: [{ type: "text", text }], finishReason: null });

describe("getPendingTask reads the latest assistant message only", () => {
  it("an integration request", async () => {
    const { client } = testClient();
    const pause = integrationPause(["Neon"]);
    chatWithMessages([pause, user("set up a database")]);
    expect(await client.getPendingTask("chat_1")).toEqual({
      kind: "integration",
      message: pause,
      integrations: ["Neon"],
      mcpPresets: [],
    });
  });

  it("a permission request, with the permissions unchanged", async () => {
    const { client } = testClient();
    const pause = permissionPause([SETUP_DB_PERMISSION]);
    chatWithMessages([pause]);
    expect(await client.getPendingTask("chat_1")).toEqual({
      kind: "permissions",
      message: pause,
      permissions: [SETUP_DB_PERMISSION],
    });
  });

  it("an older blocked message does not count once a newer assistant message answered", async () => {
    const { client } = testClient();
    chatWithMessages([message(), user("never mind"), integrationPause(["Neon"])]);
    expect(await client.getPendingTask("chat_1")).toBeNull();
  });

  it("a newer user message does not hide the latest assistant message", async () => {
    const { client } = testClient();
    chatWithMessages([user("hello?"), integrationPause(["Neon"])]);
    expect((await client.getPendingTask("chat_1"))?.kind).toBe("integration");
  });

  it("a message with the parts but finishReason stop is not pending", async () => {
    const { client } = testClient();
    chatWithMessages([integrationPause(["Neon"], { finishReason: "stop" })]);
    expect(await client.getPendingTask("chat_1")).toBeNull();
  });

  it("a chat with no assistant message waits for nothing", async () => {
    const { client } = testClient();
    chatWithMessages([user("hi")]);
    expect(await client.getPendingTask("chat_1")).toBeNull();
  });
});

describe("confirmIntegrations", () => {
  it("defaults to exactly the requested names", async () => {
    const { client } = testClient();
    const resolved = chatWithMessages([integrationPause(["Neon", "Stripe"])]);
    await client.confirmIntegrations("chat_1");
    expect(resolved).toEqual([
      { task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon", "Stripe"] } },
    ]);
  });

  it("sends given names as they are; the service judges them", async () => {
    const { client } = testClient();
    const resolved = chatWithMessages([integrationPause(["Neon"])]);
    await client.confirmIntegrations("chat_1", ["Supabase"]);
    expect(resolved).toEqual([
      { task: { type: "confirmed-steps", connectedIntegrationNames: ["Supabase"] } },
    ]);
  });

  it("throws NoPendingTaskError, sending nothing, when the chat waits for permissions instead", async () => {
    const { client } = testClient();
    const resolved = chatWithMessages([permissionPause([SETUP_DB_PERMISSION])]);
    const error = await client.confirmIntegrations("chat_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoPendingTaskError);
    expect((error as NoPendingTaskError).pending?.kind).toBe("permissions");
    expect((error as Error).message).toMatch(/chat_1.*integration/);
    expect(resolved).toEqual([]);
  });
});

describe("rejectIntegrations", () => {
  it("sends confirmed-steps with no names", async () => {
    const { client } = testClient();
    const resolved = chatWithMessages([integrationPause(["Neon"])]);
    await client.rejectIntegrations("chat_1");
    expect(resolved).toEqual([{ task: { type: "confirmed-steps", connectedIntegrationNames: [] } }]);
  });

  it("throws NoPendingTaskError when nothing is pending", async () => {
    const { client } = testClient();
    chatWithMessages([message()]);
    await expect(client.rejectIntegrations("chat_1")).rejects.toBeInstanceOf(NoPendingTaskError);
  });
});

describe("approvePermissions", () => {
  it("passes the pending permissions back unchanged, extra fields included", async () => {
    const { client } = testClient();
    const resolved = chatWithMessages([permissionPause([SETUP_DB_PERMISSION])]);
    await client.approvePermissions("chat_1");
    expect(resolved).toEqual([
      { task: { type: "confirmed-permissions", permissions: [SETUP_DB_PERMISSION] } },
    ]);
  });

  it("throws NoPendingTaskError when the chat waits for an integration", async () => {
    const { client } = testClient();
    chatWithMessages([integrationPause(["Neon"])]);
    await expect(client.approvePermissions("chat_1")).rejects.toBeInstanceOf(NoPendingTaskError);
  });
});

describe("pure readers are exported", () => {
  it("findIntegrationRequest and findPendingPermissions read a message", () => {
    expect(findIntegrationRequest(integrationPause(["Neon"]))?.integrations).toEqual(["Neon"]);
    expect(findPendingPermissions(permissionPause([SETUP_DB_PERMISSION]))).toEqual([SETUP_DB_PERMISSION]);
    expect(findIntegrationRequest(message())).toBeNull();
    expect(findPendingPermissions(message())).toBeNull();
  });
});
