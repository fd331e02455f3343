/** ChatClient end to end against the whole reference server (its handler in-process, through the client's `fetch`): every endpoint and every pause rule. */
import { describe, expect, it } from "vitest";
import {
  AuthenticationError,
  BadRequestError,
  ChatClient,
  ConflictError,
  type Message,
  NoPendingTaskError,
  NotFoundError,
  type Permission,
  PermissionDeniedError,
  type Task,
  UnprocessableEntityError,
} from "../../src/index.js";
import { useRequestableReferenceServer } from "../support/reference-request.js";

const held = useRequestableReferenceServer();
const clients: Record<string, ChatClient> = {};

/** The client of a seeded account or team, by slug. */
function as(slug: string): ChatClient {
  const token = held.server.apiKeys[slug];
  if (!token) throw new Error(`the reference server seeds no API key for ${slug}`);
  clients[slug] ??= new ChatClient({
    baseUrl: held.server.url,
    token,
    maxRetries: 0,
    fetch: held.server.fetch,
  });
  return clients[slug];
}

const DATABASE_PROMPT = "Build a todo app that stores its items in a database";

/** A new chat of `slug` paused on its integration request. */
async function chatPausedOnIntegration(slug = "personal") {
  const client = as(slug);
  const chat = await client.createChat({ message: DATABASE_PROMPT });
  return { client, chat };
}

/** A new chat paused on its script permission, and the permissions it waits for. */
async function chatPausedOnPermission(slug = "personal") {
  const { client, chat } = await chatPausedOnIntegration(slug);
  const reply = await client.confirmIntegrations(chat.id);
  const pending = await client.getPendingTask(chat.id);
  if (pending?.kind !== "permissions") throw new Error("expected a permission pause");
  return { client, chat, reply, permissions: pending.permissions };
}

function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

describe("create chat: the assistant has answered", () => {
  it("a plain request gets a stop reply and nothing is pending", async () => {
    const client = as("personal");
    const chat = await client.createChat({ message: "Say hello", title: "Greeting" });
    expect(chat).toMatchObject({ object: "chat", title: "Greeting" });
    const page = await client.listMessages(chat.id);
    expect(page.data.map((m) => m.role)).toEqual(["assistant", "user"]);
    expect(page.data[0]?.finishReason).toBe("stop");
    expect(await client.getPendingTask(chat.id)).toBeNull();
  });

  it("the chat url names the account or team, and projectId is present but never the hostProjectId", async () => {
    const chat = await as("acme").createChat({ message: "Say hello" });
    expect(chat.url).toContain("/acme/");
    expect(chat.hostProjectId).toEqual(expect.any(String));
    expect(chat.projectId).toEqual(expect.any(String));
    expect(chat.projectId).not.toBe(chat.hostProjectId);
    expect(await as("acme").getChat(chat.id)).toEqual(chat);
  });

  it("a team with no hosting project (studio): chats have no hostProjectId", async () => {
    const client = as("studio");
    const chat = await client.createChat({ message: "Say hello" });
    expect(chat).not.toHaveProperty("hostProjectId");
    expect(await client.getChat(chat.id)).not.toHaveProperty("hostProjectId");
    expect(chat.url).toContain("/studio/");
  });
});

describe("paused on integration request -> confirmed-steps -> paused on script permission -> confirmed-permissions -> stop", () => {
  it("runs the whole flow through the helpers", async () => {
    const { client, chat } = await chatPausedOnIntegration();

    const integration = await client.getPendingTask(chat.id);
    expect(integration).toMatchObject({ kind: "integration", integrations: ["Neon"] });

    const afterConnect = await client.confirmIntegrations(chat.id);
    expect(afterConnect).toMatchObject({ role: "assistant", finishReason: "tool-calls" });

    const permission = await client.getPendingTask(chat.id);
    expect(permission?.kind).toBe("permissions");
    const permissions = permission?.kind === "permissions" ? permission.permissions : [];
    expect(permissions).toEqual([
      expect.objectContaining({
        type: "ALLOW_DYNAMIC_TOOL_STRICT",
        toolName: "SystemAction",
        input: expect.objectContaining({
          systemAction: "executeScript",
          executeScript: "/scripts/setup-db.sql",
        }),
      }),
    ]);
    expect(permission?.message.id).toBe(afterConnect.id);

    const done = await client.approvePermissions(chat.id);
    expect(done).toMatchObject({ role: "assistant", finishReason: "stop" });
    expect(await client.getPendingTask(chat.id)).toBeNull();
    expect(await client.getMessage(chat.id, done.id)).toEqual(done);
  });

  it("confirmed-steps names match in any order (resolveTask directly)", async () => {
    const { client, chat } = await chatPausedOnIntegration();
    const reply = await client.resolveTask(chat.id, {
      type: "confirmed-steps",
      connectedIntegrationNames: ["Neon"],
    });
    expect(reply.finishReason).toBe("tool-calls");
  });
});

describe("paused on integration request -> confirmed-steps with no names rejects it", () => {
  it("rejectIntegrations: the assistant goes on without it", async () => {
    const { client, chat } = await chatPausedOnIntegration();
    const reply = await client.rejectIntegrations(chat.id);
    expect(reply).toMatchObject({ role: "assistant", finishReason: "stop" });
    expect(await client.getPendingTask(chat.id)).toBeNull();
  });
});

describe("paused on script permission -> any follow-up message rejects it", () => {
  it("sendMessage moves on; the old permission can no longer be approved", async () => {
    const { client, chat, permissions } = await chatPausedOnPermission();
    const reply = await client.sendMessage(chat.id, { message: "Skip that, just say hello" });
    expect(reply).toMatchObject({ role: "assistant", chatId: chat.id });
    expect(await client.getPendingTask(chat.id)).toBeNull();
    await expect(client.approvePermissions(chat.id)).rejects.toBeInstanceOf(NoPendingTaskError);
    const stale = await errorOf(client.resolveTask(chat.id, { type: "confirmed-permissions", permissions }));
    expect(stale).toBeInstanceOf(ConflictError);
  });

  it("a follow-up message also rejects a pending integration request", async () => {
    const { client, chat } = await chatPausedOnIntegration();
    await client.sendMessage(chat.id, { message: "Never mind, say hello" });
    expect(await client.getPendingTask(chat.id)).toBeNull();
  });
});

describe("resolve targets an older task -> 409 ConflictError", () => {
  const otherScript: Permission = {
    type: "ALLOW_DYNAMIC_TOOL_STRICT",
    toolName: "SystemAction",
    input: { systemAction: "executeScript", executeScript: "/scripts/drop-everything.sql" },
  };

  it("the chat is not blocked any more (it moved on)", async () => {
    const { client, chat } = await chatPausedOnIntegration();
    await client.confirmIntegrations(chat.id);
    await client.approvePermissions(chat.id);
    const error = await errorOf(
      client.resolveTask(chat.id, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] }),
    );
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe("conflict");
  });

  it("a chat that never paused", async () => {
    const client = as("personal");
    const chat = await client.createChat({ message: "Say hello" });
    await expect(
      client.resolveTask(chat.id, { type: "confirmed-steps", connectedIntegrationNames: [] }),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it("other integration names than requested", async () => {
    const { client, chat } = await chatPausedOnIntegration();
    await expect(client.confirmIntegrations(chat.id, ["Supabase"])).rejects.toBeInstanceOf(ConflictError);
    await expect(client.confirmIntegrations(chat.id, ["Neon", "Supabase"])).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect((await client.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("the other task type (permissions while an integration is pending, and the reverse)", async () => {
    const onIntegration = await chatPausedOnIntegration();
    await expect(
      onIntegration.client.resolveTask(onIntegration.chat.id, {
        type: "confirmed-permissions",
        permissions: [otherScript],
      }),
    ).rejects.toBeInstanceOf(ConflictError);

    const onPermission = await chatPausedOnPermission();
    await expect(
      onPermission.client.resolveTask(onPermission.chat.id, {
        type: "confirmed-steps",
        connectedIntegrationNames: ["Neon"],
      }),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it("other permissions than pending", async () => {
    const { client, chat, permissions } = await chatPausedOnPermission();
    await expect(
      client.resolveTask(chat.id, { type: "confirmed-permissions", permissions: [otherScript] }),
    ).rejects.toBeInstanceOf(ConflictError);
    await expect(
      client.resolveTask(chat.id, {
        type: "confirmed-permissions",
        permissions: [...permissions, otherScript],
      }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect((await client.getPendingTask(chat.id))?.kind).toBe("permissions");
  });
});

describe("confirmed-permissions with an empty list -> 422", () => {
  it("is an UnprocessableEntityError and the pause stays", async () => {
    const { client, chat } = await chatPausedOnPermission();
    const error = await errorOf(
      client.resolveTask(chat.id, { type: "confirmed-permissions", permissions: [] }),
    );
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).status).toBe(422);
    expect((await client.getPendingTask(chat.id))?.kind).toBe("permissions");
  });
});

describe("a malformed task -> 400", () => {
  const malformed: Array<[string, unknown]> = [
    ["confirmed-steps without names", { type: "confirmed-steps" }],
    ["names that are not an array", { type: "confirmed-steps", connectedIntegrationNames: "Neon" }],
    ["permissions that are not permission objects", { type: "confirmed-permissions", permissions: ["yes"] }],
    ["no type", { connectedIntegrationNames: ["Neon"] }],
  ];
  for (const [name, task] of malformed) {
    it(name, async () => {
      const { client, chat } = await chatPausedOnIntegration();
      const error = await errorOf(client.resolveTask(chat.id, task as Task));
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).code).toBe("bad_request");
    });
  }
});

describe("another account's or team's chat -> 404", () => {
  it("every endpoint answers NotFoundError", async () => {
    const { chat } = await chatPausedOnIntegration("acme");
    const outsider = as("personal");
    const messageId = (await as("acme").listMessages(chat.id)).data[0]!.id;
    const calls: Array<() => PromiseLike<unknown>> = [
      () => outsider.getChat(chat.id),
      () => outsider.listMessages(chat.id),
      () => outsider.getMessage(chat.id, messageId),
      () => outsider.sendMessage(chat.id, { message: "hi" }),
      () => outsider.resolveTask(chat.id, { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] }),
      () => outsider.getPreview(chat.id),
    ];
    for (const call of calls) expect(await errorOf(Promise.resolve(call()))).toBeInstanceOf(NotFoundError);
    expect((await as("acme").getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("an id that does not exist", async () => {
    await expect(as("personal").getChat("chat_does_not_exist")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("credentials", () => {
  it("an unknown token -> AuthenticationError", async () => {
    const client = new ChatClient({
      baseUrl: held.server.url,
      token: "not-a-key",
      maxRetries: 0,
      fetch: held.server.fetch,
    });
    await expect(client.listChats()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it("a team that requires SSO -> PermissionDeniedError with a reauthUrl", async () => {
    const error = await errorOf(as("secure-corp").listChats());
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect((error as PermissionDeniedError).code).toBe("sso_required");
    expect((error as PermissionDeniedError).reauthUrl).toEqual(expect.stringMatching(/^http/));
  });
});

describe("lists page with limit and cursor", () => {
  it("listChats: for await walks every page, newest-updated first, filtered by topic", async () => {
    const client = as("acme");
    const topic = `pagination-${Date.now().toString(36)}`;
    const created = [];
    for (let i = 0; i < 5; i++)
      created.push(await client.createChat({ message: `Note ${i} about ${topic}` }));

    const first = await client.listChats({ topic, limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.hasNextPage()).toBe(true);

    const ids: string[] = [];
    for await (const chat of client.listChats({ topic, limit: 2 })) ids.push(chat.id);
    expect(ids).toEqual(created.map((c) => c.id).reverse());
  });

  it("listMessages: for await walks every message, newest first (resolving adds assistant replies only)", async () => {
    const { client, chat } = await chatPausedOnIntegration();
    await client.confirmIntegrations(chat.id);
    await client.approvePermissions(chat.id);
    await client.sendMessage(chat.id, { message: "Thanks, say hello" });
    const all: Message[] = [];
    for await (const message of client.listMessages(chat.id, { limit: 2 })) all.push(message);
    expect(all.map((m) => m.role)).toEqual([
      "assistant",
      "user",
      "assistant",
      "assistant",
      "assistant",
      "user",
    ]);
    const onePage = await client.listMessages(chat.id, { limit: 100 });
    expect(all).toEqual(onePage.data);
  });
});

describe("preview", () => {
  it("getPreview answers the chat's preview URL", async () => {
    const client = as("personal");
    const chat = await client.createChat({ message: "Say hello" });
    const preview = await client.getPreview(chat.id);
    expect(preview).toMatchObject({ object: "preview", chatId: chat.id });
    expect(new URL(preview.url).origin).toBe(new URL(held.server.url).origin);
  });
});
