/** What ChatClient sends (paths, queries, bodies, headers, credentials) and how it checks what comes back. */
import { HttpResponse, http } from "msw";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatClient, otherTask, ResponseValidationError } from "../../src/index.js";
import { BASE_URL, chat, message, TOKEN, testClient, useMockService } from "./fixtures.js";

const storedAccessToken = vi.hoisted(() =>
  vi.fn(async (_baseUrl: string): Promise<string | undefined> => undefined),
);
vi.mock("../../src/auth/rest-token.js", () => ({ storedAccessToken }));

const server = useMockService();

/** Records every request and answers with `answer`. */
function recordRequests(answer: (request: Request) => Response) {
  const requests: Request[] = [];
  server.use(
    http.all(`${BASE_URL}/*`, ({ request }) => {
      requests.push(request.clone());
      return answer(request);
    }),
  );
  return requests;
}

describe("endpoints", () => {
  it("each method calls its endpoint with its body", async () => {
    const { client } = testClient();
    const requests = recordRequests((request) => {
      const path = new URL(request.url).pathname;
      if (path.endsWith("/preview"))
        return HttpResponse.json({ object: "preview", chatId: "chat_1", url: "u" });
      if (path === "/v2/chats" && request.method === "GET") {
        return HttpResponse.json({ object: "list", data: [chat()], nextCursor: null });
      }
      if (path.endsWith("/messages") && request.method === "GET") {
        return HttpResponse.json({ object: "list", data: [message()], nextCursor: null });
      }
      if (path === "/v2/chats" || /^\/v2\/chats\/[^/]+$/.test(path)) return HttpResponse.json(chat());
      return HttpResponse.json(message());
    });
    const task = otherTask({ type: "answer-question", answer: "yes", extra: { kept: true } });
    await client.createChat({ message: "build a database", title: "DB" });
    await client.listChats({ topic: "data base", limit: 5, cursor: "c/1" });
    await client.getChat("chat_1");
    await client.listMessages("chat_1", { limit: 2 });
    await client.getMessage("chat_1", "msg_1");
    await client.sendMessage("chat_1", { message: "hello" });
    await client.resolveTask("chat_1", task);
    await client.getPreview("chat_1");

    const seen = await Promise.all(
      requests.map(async (r) => {
        const url = new URL(r.url);
        return [r.method, url.pathname + url.search, r.method === "POST" ? await r.json() : undefined];
      }),
    );
    expect(seen).toEqual([
      ["POST", "/v2/chats", { message: "build a database", title: "DB" }],
      ["GET", "/v2/chats?topic=data%20base&limit=5&cursor=c%2F1", undefined],
      ["GET", "/v2/chats/chat_1", undefined],
      ["GET", "/v2/chats/chat_1/messages?limit=2", undefined],
      ["GET", "/v2/chats/chat_1/messages/msg_1", undefined],
      ["POST", "/v2/chats/chat_1/messages", { message: "hello" }],
      ["POST", "/v2/chats/chat_1/messages/resolve", { task }],
      ["GET", "/v2/chats/chat_1/preview", undefined],
    ]);
  });

  it("path ids are encoded as one segment", async () => {
    const { client } = testClient();
    const requests = recordRequests(() => HttpResponse.json(message()));
    await client.getMessage("a/b?c", "m#1");
    expect(new URL(requests[0]!.url).pathname).toBe("/v2/chats/a%2Fb%3Fc/messages/m%231");
  });

  it("an empty id is refused before sending, as a rejected promise (never a synchronous throw)", async () => {
    const { client } = testClient();
    const requests = recordRequests(() => HttpResponse.json(chat()));
    let pending: Promise<unknown> | undefined;
    expect(() => {
      pending = client.getChat("");
    }).not.toThrow();
    await expect(pending).rejects.toThrow(/chatId must be a non-empty string/);
    await expect(client.getMessage("chat_1", "")).rejects.toThrow(/messageId/);
    await expect(client.listMessages("")).rejects.toThrow(/chatId/);
    await expect(client.resolveTask("", { type: "confirmed-permissions", permissions: [] })).rejects.toThrow(
      /chatId/,
    );
    expect(requests).toEqual([]);
  });
});

describe("headers", () => {
  it("sends bearer auth, JSON accept and content type, and a user agent; no retry count on the first attempt", async () => {
    const { client } = testClient();
    const requests = recordRequests(() => HttpResponse.json(message()));
    await client.sendMessage("chat_1", { message: "hi" });
    const headers = requests[0]!.headers;
    expect(headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
    expect(headers.get("accept")).toBe("application/json");
    expect(headers.get("content-type")).toBe("application/json");
    expect(headers.get("user-agent")).toMatch(/^chat-mcp-bridge/);
    expect(headers.has("x-retry-count")).toBe(false);
  });

  it("client and per-call headers merge case-insensitively; null removes one", async () => {
    const { client } = testClient({ headers: { "X-Team-Hint": "acme", "User-Agent": "my-app/1" } });
    const requests = recordRequests(() => HttpResponse.json(chat()));
    await client.getChat("chat_1", { headers: { "x-call": "1", "user-agent": null } });
    const headers = requests[0]!.headers;
    expect(headers.get("x-team-hint")).toBe("acme");
    expect(headers.get("x-call")).toBe("1");
    expect(headers.get("user-agent")).not.toBe("my-app/1");
    expect(headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
  });
});

describe("credentials", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    storedAccessToken.mockReset();
  });

  it("token option first, then $CHAT_API_KEY", async () => {
    vi.stubEnv("CHAT_API_KEY", "from-env");
    const requests = recordRequests(() => HttpResponse.json(chat()));
    await new ChatClient({ baseUrl: BASE_URL }).getChat("chat_1");
    await new ChatClient({ baseUrl: BASE_URL, token: "from-option" }).getChat("chat_1");
    expect(requests.map((r) => r.headers.get("authorization"))).toEqual([
      "Bearer from-env",
      "Bearer from-option",
    ]);
    expect(storedAccessToken).not.toHaveBeenCalled();
  });

  it("then the chat-cli login credentials for the base URL, read once", async () => {
    vi.stubEnv("CHAT_API_KEY", "");
    storedAccessToken.mockResolvedValue("from-login");
    const requests = recordRequests(() => HttpResponse.json(chat()));
    const client = new ChatClient({ baseUrl: BASE_URL });
    await client.getChat("chat_1");
    await client.getChat("chat_1");
    expect(requests.map((r) => r.headers.get("authorization"))).toEqual([
      "Bearer from-login",
      "Bearer from-login",
    ]);
    expect(storedAccessToken).toHaveBeenCalledTimes(1);
    expect(storedAccessToken).toHaveBeenCalledWith(BASE_URL);
  });

  it("a 401 with login credentials reads them again (refreshed) and retries once", async () => {
    vi.stubEnv("CHAT_API_KEY", "");
    storedAccessToken.mockResolvedValueOnce("expired").mockResolvedValueOnce("fresh");
    const requests = recordRequests((request) =>
      request.headers.get("authorization") === "Bearer fresh"
        ? HttpResponse.json(message())
        : HttpResponse.json({ error: { code: "unauthorized", message: "expired" } }, { status: 401 }),
    );
    const client = new ChatClient({ baseUrl: BASE_URL });
    await expect(client.sendMessage("chat_1", { message: "hi" })).resolves.toMatchObject({
      object: "message",
    });
    expect(requests).toHaveLength(2);
  });

  it("with no credential at all the request goes without one and the 401 says how to sign in", async () => {
    vi.stubEnv("CHAT_API_KEY", "");
    const requests = recordRequests(() =>
      HttpResponse.json(
        { error: { code: "unauthorized", message: "missing bearer token" } },
        { status: 401 },
      ),
    );
    await expect(new ChatClient({ baseUrl: BASE_URL }).getChat("chat_1")).rejects.toThrow(/chat-cli login/);
    expect(requests[0]!.headers.has("authorization")).toBe(false);
  });
});

describe("responses are validated against the wire schemas", () => {
  it("a list item missing its id names its path", async () => {
    const { client } = testClient();
    const { id: _dropped, ...broken } = chat();
    recordRequests(() => HttpResponse.json({ object: "list", data: [broken], nextCursor: null }));
    const error = await client.listChats().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toContain("data[0].id");
    expect((error as ResponseValidationError).issues[0]?.path).toEqual(["data", 0, "id"]);
  });

  it("parts that are not an array name the field", async () => {
    const { client } = testClient();
    recordRequests(() => HttpResponse.json({ ...message(), parts: "text" }));
    await expect(client.getMessage("chat_1", "msg_1")).rejects.toThrow(/parts/);
  });

  it("a field of a type the seed gives, with another type, names its path", async () => {
    const { client } = testClient();
    const broken = message({
      parts: [
        { type: "agent-action", name: "get_or_request_integration", data: { requestedIntegrations: "Neon" } },
      ],
    } as never);
    recordRequests(() => HttpResponse.json(broken));
    const error = await client.getMessage("chat_1", "msg_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toContain("parts[0].data.requestedIntegrations");
  });

  it("unknown roles and finish reasons pass, and so does null where a value is not yet known", async () => {
    const { client } = testClient();
    const sent = message({ role: "tool", finishReason: "length", content: null, createdAt: null } as never);
    recordRequests(() => HttpResponse.json(sent));
    expect(await client.getMessage("chat_1", sent.id)).toEqual(sent);
  });

  it("validateResponses: false returns the parsed JSON without checking it", async () => {
    const { client } = testClient({ validateResponses: false });
    const odd = { id: 42, parts: "not an array", anything: true };
    recordRequests(() => HttpResponse.json(odd));
    expect(await client.getMessage("chat_1", "msg_1")).toEqual(odd);
  });

  it("a 200 that is not JSON", async () => {
    const { client } = testClient();
    recordRequests(() => HttpResponse.html("<html>login page</html>"));
    const error = await client.getChat("chat_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toMatch(/not JSON/);
  });

  it("unknown fields and part types pass through untouched", async () => {
    const { client } = testClient();
    const sent = message({
      parts: [{ type: "reasoning", text: "hmm", depth: 3 }],
      extraField: { a: 1 },
    } as never);
    recordRequests(() => HttpResponse.json(sent));
    expect(await client.getMessage("chat_1", sent.id)).toEqual(sent);
  });

  it("a chat without hostProjectId is valid", async () => {
    const { client } = testClient();
    const { hostProjectId: _none, ...studioChat } = chat();
    recordRequests(() => HttpResponse.json(studioChat));
    const got = await client.getChat("chat_1");
    expect(got).not.toHaveProperty("hostProjectId");
  });
});
