/** Cursor pagination: a page is async-iterable over every item of every page, and so is the un-awaited promise. */
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { ChatConnectionError, Page } from "../../src/index.js";
import { BASE_URL, chat, message, testClient, useMockService } from "./fixtures.js";

const server = useMockService();

/** Serves `items` in pages of `limit` (cursor = index of the next item); records the cursors asked for. */
function servePages<T>(path: string, items: T[]) {
  const cursors: Array<string | null> = [];
  server.use(
    http.get(`${BASE_URL}${path}`, ({ request }) => {
      const query = new URL(request.url).searchParams;
      const cursor = query.get("cursor");
      cursors.push(cursor);
      const start = Number(cursor ?? 0);
      const limit = Number(query.get("limit") ?? 20);
      const end = start + limit;
      return HttpResponse.json({
        object: "list",
        data: items.slice(start, end),
        nextCursor: end < items.length ? String(end) : null,
      });
    }),
  );
  return cursors;
}

const sevenChats = Array.from({ length: 7 }, (_, i) => chat({ id: `chat_${i}` }));

describe("awaiting a list gives one page", () => {
  it("with object, data, nextCursor and hasNextPage()", async () => {
    const { client } = testClient();
    servePages("/v2/chats", sevenChats);
    const page = await client.listChats({ limit: 3 });
    expect(page).toBeInstanceOf(Page);
    expect(page.object).toBe("list");
    expect(page.data.map((c) => c.id)).toEqual(["chat_0", "chat_1", "chat_2"]);
    expect(page.nextCursor).toBe("3");
    expect(page.hasNextPage()).toBe(true);
    expect(JSON.parse(JSON.stringify(page))).toEqual({ object: "list", data: page.data, nextCursor: "3" });
  });

  it("getNextPage() follows the cursor, keeping the limit", async () => {
    const { client } = testClient();
    const cursors = servePages("/v2/chats", sevenChats);
    const first = await client.listChats({ limit: 3 });
    const second = await first.getNextPage();
    const third = await second.getNextPage();
    expect(third.data.map((c) => c.id)).toEqual(["chat_6"]);
    expect(third.hasNextPage()).toBe(false);
    await expect(third.getNextPage()).rejects.toThrow(/hasNextPage/);
    expect(cursors).toEqual([null, "3", "6"]);
  });
});

describe("for await iterates across pages", () => {
  it("over the un-awaited promise: every chat of 3 pages, in order", async () => {
    const { client } = testClient();
    const cursors = servePages("/v2/chats", sevenChats);
    const ids: string[] = [];
    for await (const c of client.listChats({ limit: 3 })) ids.push(c.id);
    expect(ids).toEqual(sevenChats.map((c) => c.id));
    expect(cursors).toEqual([null, "3", "6"]);
  });

  it("over an awaited page, from that page on", async () => {
    const { client } = testClient();
    const messages = Array.from({ length: 5 }, () => message());
    servePages("/v2/chats/chat_1/messages", messages);
    const first = await client.listMessages("chat_1", { limit: 2 });
    const second = await first.getNextPage();
    const ids: string[] = [];
    for await (const m of second) ids.push(m.id);
    expect(ids).toEqual(messages.slice(2).map((m) => m.id));
  });

  it("breaking early fetches no further pages", async () => {
    const { client } = testClient();
    const cursors = servePages("/v2/chats", sevenChats);
    for await (const c of client.listChats({ limit: 3 })) {
      if (c.id === "chat_1") break;
    }
    expect(cursors).toEqual([null]);
  });

  it("iterPages() yields the pages themselves", async () => {
    const { client } = testClient();
    servePages("/v2/chats", sevenChats);
    const sizes: number[] = [];
    for await (const page of (await client.listChats({ limit: 3 })).iterPages()) sizes.push(page.data.length);
    expect(sizes).toEqual([3, 3, 1]);
  });

  it("a cursor pointing back at the same page ends the walk instead of looping", async () => {
    const { client } = testClient();
    server.use(
      http.get(`${BASE_URL}/v2/chats`, () =>
        HttpResponse.json({ object: "list", data: [chat()], nextCursor: "same" }),
      ),
    );
    const ids: string[] = [];
    for await (const c of client.listChats({ cursor: "same" })) ids.push(c.id);
    expect(ids).toEqual(["chat_1"]);
  });

  it("an error on a later page surfaces from the loop", async () => {
    const { client } = testClient({ maxRetries: 0 });
    server.use(
      http.get(`${BASE_URL}/v2/chats`, ({ request }) =>
        new URL(request.url).searchParams.get("cursor")
          ? HttpResponse.error()
          : HttpResponse.json({ object: "list", data: [chat()], nextCursor: "next" }),
      ),
    );
    const ids: string[] = [];
    await expect(async () => {
      for await (const c of client.listChats()) ids.push(c.id);
    }).rejects.toBeInstanceOf(ChatConnectionError);
    expect(ids).toEqual(["chat_1"]);
  });
});
