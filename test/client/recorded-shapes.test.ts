/**
 * ChatClient against bodies it did not design: a plain fetch handler (not the reference server) answering in the
 * /v2 envelopes with bodies as a beta service sends them: extra fields everywhere, unknown part types, permissions
 * with extra fields, finishReason absent, null or unknown, chats without projectId or title.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  ChatClient,
  type FetchLike,
  type Message,
  MissingHostProjectError,
  NoPendingTaskError,
  otherTask,
  ResponseValidationError,
} from "../../src/index.js";

interface Recorded {
  method: string;
  path: string;
  body: unknown;
}

/** Chats as recorded: no `object`, `title` or `projectId`; fields this package never heard of. */
const CHAT = {
  id: "chat_rec1",
  hostProjectId: "prj_host_77",
  url: "https://chat.example/acme/chats/chat_rec1",
  privacy: "private",
  authorId: "user_42",
  metadata: { source: "api", tags: ["beta"] },
  favorite: false,
  latestVersion: null,
  createdAt: "2026-11-02T10:00:00Z",
  updatedAt: null,
};
const CHAT_WITHOUT_HOST = {
  id: "chat_rec2",
  title: null,
  url: "https://chat.example/studio/chats/chat_rec2",
  privacy: "team",
  metadata: {},
};

/** Permissions with extra fields, at the top level and inside `input`: they must go back as they came. */
const PERMISSIONS = [
  {
    type: "ALLOW_DYNAMIC_TOOL_STRICT",
    toolName: "SystemAction",
    input: {
      systemAction: "executeScript",
      executeScript: "/scripts/setup-db.sql",
      cwd: "/app",
      env: { A: "1" },
    },
    taskNameActive: "Setting up the database",
    taskNamePast: "Set up the database",
    id: "perm_01",
  },
];

const extras = {
  privacy: "private",
  authorId: "assistant",
  metadata: { model: "v0-1.5-md", trace: "abc" },
  usage: { inputTokens: 1200, outputTokens: 85 },
  restorable: true,
  attachments: [{ url: "https://chat.example/a.png", kind: "image" }],
};

function assistant(
  id: string,
  parts: unknown[],
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return { id, role: "assistant", content: `reply ${id}`, parts, ...extras, ...more };
}

const thinking = { type: "thinking", text: "Let me look at the schema", durationMs: 1200 };
const bash = { type: "bash", command: "npm test", exitCode: 0, output: "ok" };
const fileEdit = { type: "file-edit", path: "src/db.ts", diff: "+ export const db = connect();" };

/** An integration request (Neon and the Linear preset) with finishReason absent. */
const INTEGRATION_PAUSE = assistant("msg_int", [
  thinking,
  { type: "text", text: "I need a database and an issue tracker." },
  {
    type: "agent-action",
    name: "get_or_request_integration",
    id: "act_1",
    data: { requestedIntegrations: ["Neon"], requestedMcpPresets: ["Linear"], reason: "storage" },
  },
]);
/** A permission request with finishReason null (still generating, as far as the body says). */
const PERMISSION_PAUSE = assistant(
  "msg_perm",
  [
    bash,
    fileEdit,
    { type: "tool-call", name: "SystemAction", toolCallId: "tc_1", suggestedPermissions: PERMISSIONS },
  ],
  { finishReason: null },
);
const USER = {
  id: "msg_user",
  role: "user",
  content: "Add a database and track issues",
  parts: [],
  ...extras,
};

/** Never dialed: every request goes to `recorded`. */
const baseUrl = "http://recorded.test";
let requests: Recorded[] = [];
/** The chat's messages, newest first, as the list endpoint pages them (two per page). */
let messages: Array<Record<string, unknown>> = [];

function route(method: string, url: URL, body: unknown): [number, unknown] {
  const path = url.pathname;
  const reply = assistant("msg_reply", [thinking, { type: "text", text: "Done." }], { finishReason: "stop" });
  if (method === "POST" && path === "/v2/chats") return [201, { ...CHAT, createdFrom: body }];
  if (method === "GET" && path === "/v2/chats") {
    return url.searchParams.get("cursor") === "page2"
      ? [200, { data: [CHAT_WITHOUT_HOST], nextCursor: null, hasMore: false }]
      : [200, { object: "list", data: [CHAT], nextCursor: "page2", hasMore: true }];
  }
  if (method === "GET" && path === `/v2/chats/${CHAT.id}`) return [200, CHAT];
  if (method === "GET" && path === `/v2/chats/${CHAT_WITHOUT_HOST.id}`) return [200, CHAT_WITHOUT_HOST];
  const messagesPath = /^\/v2\/chats\/(chat_rec[12])\/messages$/.exec(path);
  if (method === "GET" && messagesPath) {
    const start = Number(url.searchParams.get("cursor") ?? 0);
    const next = start + 2 < messages.length ? String(start + 2) : null;
    return [
      200,
      { object: "list", data: messages.slice(start, start + 2), nextCursor: next, total: messages.length },
    ];
  }
  if (method === "POST" && messagesPath) return [200, reply];
  if (method === "POST" && /^\/v2\/chats\/chat_rec[12]\/messages\/resolve$/.test(path)) return [200, reply];
  if (method === "GET" && path === `/v2/chats/${CHAT.id}/messages/msg_int`) return [200, INTEGRATION_PAUSE];
  if (method === "GET" && path === `/v2/chats/${CHAT.id}/preview`) {
    return [200, { url: "https://preview.example/chat_rec1", expiresAt: "2026-11-03T00:00:00Z" }];
  }
  return [404, { error: { code: "not_found", message: `No route ${method} ${path}` } }];
}

/** The recorded service: each request is noted, then answered from `route`. */
const recorded: FetchLike = async (input, init) => {
  const request = new Request(input, init);
  const url = new URL(request.url);
  const text = await request.text();
  const body: unknown = text ? JSON.parse(text) : undefined;
  requests.push({ method: request.method, path: url.pathname, body });
  const [status, payload] = route(request.method, url, body);
  return new Response(JSON.stringify(payload), {
    status,
    headers: { "content-type": "application/json", "x-request-id": "req_recorded" },
  });
};

beforeEach(() => {
  requests = [];
  messages = [INTEGRATION_PAUSE, USER];
});

const client = () => new ChatClient({ baseUrl, token: "recorded-token", maxRetries: 0, fetch: recorded });
const posts = () => requests.filter((request) => request.method === "POST");

describe("every method reads the recorded bodies and keeps every field", () => {
  it("createChat and getChat: a chat without projectId, title or object", async () => {
    const created = await client().createChat({ message: "Build an app" });
    expect(created).toEqual({ ...CHAT, createdFrom: { message: "Build an app" } });
    const chat = await client().getChat(CHAT.id);
    expect(chat).toEqual(CHAT);
    expect(chat.projectId).toBeUndefined();
    expect(chat.hostProjectId).toBe("prj_host_77");
  });

  it("listChats: pages without `object`, with extra fields, walked by for await", async () => {
    const first = await client().listChats();
    expect(first.data).toEqual([CHAT]);
    expect(first.hasNextPage()).toBe(true);
    const all = [];
    for await (const chat of client().listChats()) all.push(chat);
    expect(all).toEqual([CHAT, CHAT_WITHOUT_HOST]);
  });

  it("listMessages and getMessage: unknown part types and extra fields pass through untouched", async () => {
    messages = [INTEGRATION_PAUSE, USER, PERMISSION_PAUSE];
    const all: Message[] = [];
    for await (const message of client().listMessages(CHAT.id)) all.push(message);
    expect(all).toEqual([INTEGRATION_PAUSE, USER, PERMISSION_PAUSE]);
    expect(await client().getMessage(CHAT.id, "msg_int")).toEqual(INTEGRATION_PAUSE);
  });

  it("sendMessage, resolveTask and getPreview", async () => {
    const reply = await client().sendMessage(CHAT.id, { message: "go on" });
    expect(reply.parts.map((part) => part.type)).toEqual(["thinking", "text"]);
    expect(reply).toMatchObject(extras);
    const task = otherTask({ type: "answer-question", answer: "yes", questionId: "q_1" });
    await client().resolveTask(CHAT.id, task);
    expect(posts().at(-1)?.body).toEqual({ task });
    expect(await client().getPreview(CHAT.id)).toEqual({
      url: "https://preview.example/chat_rec1",
      expiresAt: "2026-11-03T00:00:00Z",
    });
  });

  it("validateResponses: false hands back the same bodies", async () => {
    const raw = new ChatClient({ baseUrl, token: "t", validateResponses: false, fetch: recorded });
    expect(await raw.getChat(CHAT.id)).toEqual(CHAT);
    expect(await raw.getMessage(CHAT.id, "msg_int")).toEqual(INTEGRATION_PAUSE);
  });
});

describe("every flow helper reads the pause from the parts of the latest assistant message", () => {
  it("getPendingTask: an integration request with presets, finishReason absent", async () => {
    const pending = await client().getPendingTask(CHAT.id);
    expect(pending).toMatchObject({ kind: "integration", integrations: ["Neon"], mcpPresets: ["Linear"] });
    expect(pending?.message).toEqual(INTEGRATION_PAUSE);
  });

  it("confirmIntegrations sends both lists exactly as requested", async () => {
    await client().confirmIntegrations(CHAT.id);
    expect(posts()).toEqual([
      {
        method: "POST",
        path: `/v2/chats/${CHAT.id}/messages/resolve`,
        body: {
          task: {
            type: "confirmed-steps",
            connectedIntegrationNames: ["Neon"],
            connectedMcpPresetNames: ["Linear"],
          },
        },
      },
    ]);
  });

  it("rejectIntegrations sends both lists empty", async () => {
    await client().rejectIntegrations(CHAT.id);
    expect(posts().map((request) => request.body)).toEqual([
      { task: { type: "confirmed-steps", connectedIntegrationNames: [], connectedMcpPresetNames: [] } },
    ]);
  });

  it("approvePermissions sends the permissions back exactly as recorded (finishReason null)", async () => {
    messages = [PERMISSION_PAUSE, USER];
    const pending = await client().getPendingTask(CHAT.id);
    expect(pending).toMatchObject({ kind: "permissions", permissions: PERMISSIONS });
    await client().approvePermissions(CHAT.id);
    const sent = posts()[0]?.body as { task: { type: string; permissions: unknown } };
    expect(sent.task.type).toBe("confirmed-permissions");
    expect(sent.task.permissions).toEqual(PERMISSIONS);
    expect(JSON.stringify(sent.task.permissions)).toBe(JSON.stringify(PERMISSIONS));
  });

  it("a final finishReason, known or not, means not blocked", async () => {
    for (const finishReason of ["stop", "length", "content-filter"]) {
      messages = [{ ...INTEGRATION_PAUSE, finishReason }, USER];
      expect(await client().getPendingTask(CHAT.id), finishReason).toBeNull();
    }
    messages = [{ ...INTEGRATION_PAUSE, finishReason: "tool-calls" }, USER];
    expect((await client().getPendingTask(CHAT.id))?.kind).toBe("integration");
    await expect(client().confirmIntegrations(CHAT.id, undefined)).resolves.toBeDefined();
  });

  it("only the latest assistant message counts: an older pause behind a newer reply is not pending", async () => {
    const newer = assistant("msg_newer", [bash, { type: "text", text: "Skipped it." }]);
    messages = [USER, newer, INTEGRATION_PAUSE, USER];
    expect(await client().getPendingTask(CHAT.id)).toBeNull();
    await expect(client().confirmIntegrations(CHAT.id)).rejects.toBeInstanceOf(NoPendingTaskError);
    expect(posts()).toEqual([]);
  });

  it("confirmIntegrations on a chat without hostProjectId throws MissingHostProjectError; the server sees no POST", async () => {
    const error = await client()
      .confirmIntegrations(CHAT_WITHOUT_HOST.id)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingHostProjectError);
    expect((error as MissingHostProjectError).chatId).toBe(CHAT_WITHOUT_HOST.id);
    expect(requests.every((request) => request.method === "GET")).toBe(true);
    expect(posts()).toEqual([]);
  });
});

describe("a real schema break still fails, naming the field", () => {
  it("a chat without id", async () => {
    const broken = new ChatClient({
      baseUrl,
      token: "t",
      fetch: async () => Response.json({ ...CHAT, id: undefined }),
    });
    const error = await broken.getChat(CHAT.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toMatch(/\bid\b/);
  });

  it("a message whose parts is not an array", async () => {
    const broken = new ChatClient({
      baseUrl,
      token: "t",
      fetch: async () => Response.json({ ...INTEGRATION_PAUSE, parts: { type: "text" } }),
    });
    const error = await broken.getMessage(CHAT.id, "msg_int").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toContain("parts");
  });
});
