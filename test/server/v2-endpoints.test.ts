/** The eight /v2 endpoints over a real socket: shapes, scoping, lists, pagination and topic filter. */
import { describe, expect, it } from "vitest";
import { SEED_ACCOUNTS } from "../../src/server/index.js";
import { useRequestableReferenceServer } from "../support/reference-request.js";
import { apiFor } from "./helpers.js";
import {
  WrittenChatListSchema as ChatListSchema,
  WrittenChatSchema as ChatSchema,
  WrittenMessageListSchema as MessageListSchema,
  WrittenMessageSchema as MessageSchema,
  WrittenPreviewSchema as PreviewSchema,
} from "./written-shapes.js";

const ctx = useRequestableReferenceServer();

describe("POST /v2/chats: create chat", () => {
  it("answers 201 with a chat whose assistant has answered the first message", async () => {
    const api = apiFor(ctx.server, "acme");
    const created = await api.post("/v2/chats", { message: "Write a haiku about spring" });
    expect(created.status).toBe(201);
    const chat = ChatSchema.parse(created.body);
    expect(chat.title).toBe("Write a haiku about spring");
    const messages = await api.get(`/v2/chats/${chat.id}/messages`);
    const roles = MessageListSchema.parse(messages.body).data.map((m) => m.role);
    expect(roles).toEqual(["assistant", "user"]);
    expect(messages.body.data[0].finishReason).toBe("stop");
  });

  it("uses the given title", async () => {
    const created = await apiFor(ctx.server, "acme").post("/v2/chats", {
      message: "hello",
      title: "Greeting",
    });
    expect(created.body.title).toBe("Greeting");
  });

  it("gives ids that match the wire id format, with prefixes naming what they are", async () => {
    const created = await apiFor(ctx.server, "acme").post("/v2/chats", { message: "hello" });
    expect(created.body.id).toMatch(/^chat_[A-Za-z0-9_-]+$/);
    expect(created.body.projectId).toMatch(/^prj_[A-Za-z0-9_-]+$/);
  });
});

describe("Chat fields: url, projectId and hostProjectId per seeded account", () => {
  for (const account of SEED_ACCOUNTS.filter((a) => !a.requiresSso)) {
    it(`${account.slug}: url names the slug; projectId present and never hostProjectId`, async () => {
      const created = await apiFor(ctx.server, account.slug).post("/v2/chats", { message: "hi" });
      const chat = ChatSchema.parse(created.body);
      expect(chat.url).toBe(`${ctx.server.url}/${account.slug}/chats/${chat.id}`);
      expect(chat.projectId).toBeTruthy();
      expect(chat.projectId).not.toBe(chat.hostProjectId);
      if (account.hostProjectId) expect(chat.hostProjectId).toBe(account.hostProjectId);
      else expect("hostProjectId" in (created.body as object)).toBe(false);
    });
  }

  it("studio (no hosting project linked): chats lack hostProjectId, also on GET", async () => {
    const api = apiFor(ctx.server, "studio");
    const created = await api.post("/v2/chats", { message: "Add a database" });
    const fetched = await api.get(`/v2/chats/${created.body.id}`);
    expect(fetched.body).not.toHaveProperty("hostProjectId");
    expect(fetched.body.projectId).toBeTruthy();
  });
});

describe("GET /v2/chats/{chatId}: get chat", () => {
  it("returns the chat with url and hostProjectId", async () => {
    const api = apiFor(ctx.server, "personal");
    const created = await api.post("/v2/chats", { message: "hello there" });
    const fetched = await api.get(`/v2/chats/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });
});

describe("GET /v2/chats/{chatId}/messages/{messageId}: get one message", () => {
  it("returns the message with content and parts, a text part mirroring content", async () => {
    const api = apiFor(ctx.server, "personal");
    const created = await api.post("/v2/chats", { message: "hello there" });
    const list = await api.get(`/v2/chats/${created.body.id}/messages`);
    const latest = MessageSchema.parse(list.body.data[0]);
    const fetched = await api.get(`/v2/chats/${created.body.id}/messages/${latest.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(latest);
    expect(fetched.body.parts).toContainEqual({ type: "text", text: latest.content });
  });

  it("is 404 for a message id the chat does not have", async () => {
    const api = apiFor(ctx.server, "personal");
    const created = await api.post("/v2/chats", { message: "hello there" });
    const fetched = await api.get(`/v2/chats/${created.body.id}/messages/msg_doesnotexist`);
    expect(fetched.status).toBe(404);
    expect(fetched.body.error.code).toBe("not_found");
  });
});

describe("POST /v2/chats/{chatId}/messages: send message", () => {
  it("returns the assistant's reply and bumps the chat's updatedAt order", async () => {
    const api = apiFor(ctx.server, "personal");
    const first = await api.post("/v2/chats", { message: "first chat" });
    await api.post("/v2/chats", { message: "second chat" });
    const reply = await api.post(`/v2/chats/${first.body.id}/messages`, { message: "still there?" });
    expect(reply.status).toBe(200);
    const message = MessageSchema.parse(reply.body);
    expect(message.role).toBe("assistant");
    expect(message.chatId).toBe(first.body.id);
    expect(message.finishReason).toBe("stop");
    const list = await api.get("/v2/chats?limit=1");
    expect(list.body.data[0].id).toBe(first.body.id);
  });
});

describe("GET /v2/chats/{chatId}/preview: get preview", () => {
  it("returns a preview object whose url is the chat's preview page", async () => {
    const api = apiFor(ctx.server, "acme");
    const created = await api.post("/v2/chats", { message: "show me" });
    const preview = await api.get(`/v2/chats/${created.body.id}/preview`);
    expect(preview.status).toBe(200);
    expect(PreviewSchema.parse(preview.body)).toEqual({
      object: "preview",
      chatId: created.body.id,
      url: `${created.body.url}/preview`,
    });
  });
});

describe("Another account's or team's chat is 404", () => {
  it("acme's key cannot see personal's chat through any endpoint", async () => {
    const personal = apiFor(ctx.server, "personal");
    const acme = apiFor(ctx.server, "acme");
    const chat = (await personal.post("/v2/chats", { message: "private" })).body;
    const messageId = (await personal.get(`/v2/chats/${chat.id}/messages`)).body.data[0].id;
    const attempts = [
      await acme.get(`/v2/chats/${chat.id}`),
      await acme.get(`/v2/chats/${chat.id}/messages`),
      await acme.get(`/v2/chats/${chat.id}/messages/${messageId}`),
      await acme.post(`/v2/chats/${chat.id}/messages`, { message: "hi" }),
      await acme.post(`/v2/chats/${chat.id}/messages/resolve`, {
        task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] },
      }),
      await acme.get(`/v2/chats/${chat.id}/preview`),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(404);
      expect(attempt.body.error.code).toBe("not_found");
    }
    const acmeList = await acme.get("/v2/chats?limit=100");
    expect(acmeList.body.data.map((c: { id: string }) => c.id)).not.toContain(chat.id);
  });

  it("an unknown chat id is the same 404", async () => {
    const fetched = await apiFor(ctx.server, "acme").get("/v2/chats/chat_unknown");
    expect(fetched.status).toBe(404);
    expect(fetched.body.error.code).toBe("not_found");
  });
});

describe("Lists: pagination over several pages", () => {
  it("walks every chat newest-updated first with limit and nextCursor, no repeats", async () => {
    const api = apiFor(ctx.server, "studio");
    const created: string[] = [];
    for (let i = 0; i < 7; i += 1)
      created.push((await api.post("/v2/chats", { message: `paged chat ${i}` })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : "?limit=3";
      const page = await api.get(`/v2/chats${query}`);
      expect(page.status).toBe(200);
      const list = ChatListSchema.parse(page.body);
      expect(list.data.length).toBeLessThanOrEqual(3);
      seen.push(...list.data.map((chat) => chat.id));
      cursor = list.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBeGreaterThan(2);
    expect(new Set(seen).size).toBe(seen.length);
    const ours = seen.filter((id) => created.includes(id));
    expect(ours).toEqual([...created].reverse());
  });

  it("defaults to 20 per page", async () => {
    const api = apiFor(ctx.server, "studio");
    for (let i = 0; i < 21; i += 1) await api.post("/v2/chats", { message: `bulk ${i}` });
    const page = await api.get("/v2/chats");
    expect(page.body.data).toHaveLength(20);
    expect(page.body.nextCursor).toEqual(expect.any(String));
  });

  it("lists messages newest first across pages", async () => {
    const api = apiFor(ctx.server, "acme");
    const chat = (await api.post("/v2/chats", { message: "m0" })).body;
    for (let i = 1; i < 4; i += 1) await api.post(`/v2/chats/${chat.id}/messages`, { message: `m${i}` });
    const contents: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : "?limit=3";
      const page = await api.get(`/v2/chats/${chat.id}/messages${query}`);
      const list = MessageListSchema.parse(page.body);
      contents.push(...list.data.filter((m) => m.role === "user").map((m) => m.content));
      cursor = list.nextCursor;
    } while (cursor);
    expect(contents).toEqual(["m3", "m2", "m1", "m0"]);
  });
});

describe("Lists: topic filter", () => {
  it("matches title or any message text, case-insensitively", async () => {
    const api = apiFor(ctx.server, "personal");
    const byTitle = (await api.post("/v2/chats", { message: "anything", title: "Zebra Stripes" })).body.id;
    const byMessage = (await api.post("/v2/chats", { message: "first" })).body.id;
    await api.post(`/v2/chats/${byMessage}/messages`, { message: "talk about zebras please" });
    const other = (await api.post("/v2/chats", { message: "unrelated" })).body.id;
    const result = await api.get("/v2/chats?topic=ZEBRA&limit=100");
    const ids = result.body.data.map((chat: { id: string }) => chat.id);
    expect(ids).toContain(byTitle);
    expect(ids).toContain(byMessage);
    expect(ids).not.toContain(other);
  });
});
