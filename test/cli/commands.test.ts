/** chat-cli commands in-process on the reference server's handler: --json equals ChatClient, plain text is stable. */
import { afterAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { ChatSchema, MessageSchema } from "../../src/wire/index.js";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { type CliResult, cleanEnv, jsonOf, runInProcess } from "./helpers.js";

const server = createRequestableReferenceServer();
afterAll(() => server.close());
const token = server.apiKeys.acme!;
const client = new ChatClient({ baseUrl: server.url, token, fetch: server.fetch });
/** Runs chat-cli as the acme team, through CHAT_API_URL/CHAT_API_KEY. */
const run = runInProcess(cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: token }), {
  fetch: server.fetch,
});
const cli = (...args: string[]): Promise<CliResult> => run(args);

function expectOk(result: CliResult): void {
  expect(result.stderr.includes("error:") ? result.stderr : "").toBe("");
  expect(result.code).toBe(0);
}

describe("create <prompt...> [--title]", () => {
  it("--json prints exactly the chat the service created (what getChat returns)", async () => {
    const result = await cli("create", "Say", "hello", "--title", "Greeting", "--json");
    expectOk(result);
    const chat = ChatSchema.parse(jsonOf(result));
    expect(chat.title).toBe("Greeting");
    expect(await client.getChat(chat.id)).toEqual(jsonOf(result));
  });

  it("without --json prints a summary with id, URL, hosting project and pending task", async () => {
    const result = await cli("create", "Say hello again");
    expectOk(result);
    const id = /^id:\t(\S+)$/m.exec(result.stdout)?.[1];
    expect(id).toBeDefined();
    const chat = await client.getChat(id!);
    expect(result.stdout).toContain(`url:\t${chat.url}\n`);
    expect(result.stdout).toContain(`hostProjectId:\t${chat.hostProjectId}\n`);
    expect(result.stdout).toContain("pending:\tnothing\n");
  });

  it("a prompt that needs an integration shows it pending and the next step on stderr", async () => {
    const result = await cli("create", "Set up a database");
    expectOk(result);
    expect(result.stdout).toContain("pending:\tintegration: Neon\n");
    expect(result.stderr).toMatch(/chat-cli resolve \S+ --connected/);
  });
});

describe("list [--topic] [--limit] [--all]", () => {
  it("--json prints the page listChats returns", async () => {
    await cli("create", "A chat about gardening", "--json");
    const result = await cli("list", "--limit", "2", "--json");
    expectOk(result);
    const page = await client.listChats({ limit: 2 });
    expect(jsonOf(result)).toEqual({ object: "list", data: page.data, nextCursor: page.nextCursor });
  });

  it("--topic filters like listChats({ topic })", async () => {
    const result = await cli("list", "--topic", "GARDENING", "--json");
    expectOk(result);
    const page = await client.listChats({ topic: "GARDENING" });
    expect(page.data.length).toBeGreaterThan(0);
    expect(jsonOf(result)).toEqual({ object: "list", data: page.data, nextCursor: page.nextCursor });
  });

  it("--all walks every page", async () => {
    const result = await cli("list", "--all", "--limit", "1", "--json");
    expectOk(result);
    const all = [];
    for await (const chat of client.listChats({ limit: 1 })) all.push(chat);
    expect(all.length).toBeGreaterThan(1);
    expect(jsonOf(result)).toEqual({ object: "list", data: all, nextCursor: null });
  });

  it("off a TTY prints one tab-separated line per chat, and a hint on stderr when more pages exist", async () => {
    const result = await cli("list", "--limit", "1");
    expectOk(result);
    const page = await client.listChats({ limit: 1 });
    const chat = page.data[0]!;
    expect(result.stdout).toBe(`${chat.id}\t${chat.updatedAt}\t${chat.title}\n`);
    expect(result.stderr).toMatch(/--all/);
  });
});

describe("get <chatId>", () => {
  it("--json prints exactly what getChat returns", async () => {
    const chat = await client.createChat({ message: "hello" });
    const result = await cli("get", chat.id, "--json");
    expectOk(result);
    expect(jsonOf(result)).toEqual(await client.getChat(chat.id));
  });

  it("without --json prints the summary with URL", async () => {
    const chat = await client.createChat({ message: "hello", title: "Summary" });
    const result = await cli("get", chat.id);
    expectOk(result);
    expect(result.stdout).toContain("title:\tSummary\n");
    expect(result.stdout).toContain(`url:\t${chat.url}\n`);
  });
});

describe("messages <chatId> [--limit] [--all]", () => {
  it("--json prints the page listMessages returns, and --all every message", async () => {
    const chat = await client.createChat({ message: "hello" });
    await client.sendMessage(chat.id, { message: "and again" });
    const page = await client.listMessages(chat.id, { limit: 1 });
    const one = await cli("messages", chat.id, "--limit", "1", "--json");
    expectOk(one);
    expect(jsonOf(one)).toEqual({ object: "list", data: page.data, nextCursor: page.nextCursor });
    const all = await cli("messages", chat.id, "--all", "--limit", "1", "--json");
    const every = [];
    for await (const message of client.listMessages(chat.id)) every.push(message);
    expect(jsonOf(all)).toEqual({ object: "list", data: every, nextCursor: null });
  });

  it("off a TTY prints id, role, finish reason, time and content per line, newest first", async () => {
    const chat = await client.createChat({ message: "hello" });
    const result = await cli("messages", chat.id);
    expectOk(result);
    const page = await client.listMessages(chat.id);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(page.data.length);
    const [id, role, finish, createdAt] = lines[0]!.split("\t");
    expect({ id, role, finish, createdAt }).toEqual({
      id: page.data[0]!.id,
      role: page.data[0]!.role,
      finish: page.data[0]!.finishReason ?? "",
      createdAt: page.data[0]!.createdAt,
    });
  });
});

describe("message <chatId> <messageId>", () => {
  it("--json prints exactly what getMessage returns; plain text shows content", async () => {
    const chat = await client.createChat({ message: "hello" });
    const latest = (await client.listMessages(chat.id, { limit: 1 })).data[0]!;
    const json = await cli("message", chat.id, latest.id, "--json");
    expectOk(json);
    expect(jsonOf(json)).toEqual(await client.getMessage(chat.id, latest.id));
    const plain = await cli("message", chat.id, latest.id);
    expectOk(plain);
    expect(plain.stdout).toContain(`id:\t${latest.id}\n`);
    expect(plain.stdout).toContain(`content:\t${(latest.content ?? "").replace(/\s*\n\s*/g, " ")}\n`);
  });

  it("a missing message exits 1 with a one-line error naming it", async () => {
    const chat = await client.createChat({ message: "hello" });
    const result = await cli("message", chat.id, "msg_missing");
    expect(result.code).toBe(1);
    expect(result.stderr.split("\n")[0]).toMatch(/^error: message msg_missing of chat \S+ not found/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("send <chatId> <text...>", () => {
  it("--json prints the assistant's reply, the message getMessage returns", async () => {
    const chat = await client.createChat({ message: "hello" });
    const result = await cli("send", chat.id, "how", "are", "you", "--json");
    expectOk(result);
    const reply = MessageSchema.parse(jsonOf(result));
    expect(reply.role).toBe("assistant");
    expect(await client.getMessage(chat.id, reply.id)).toEqual(jsonOf(result));
    const sent = (await client.listMessages(chat.id)).data.find(
      (m) => m.role === "user" && m.content === "how are you",
    );
    expect(sent).toBeDefined();
  });

  it("without --json prints the reply's id and content", async () => {
    const chat = await client.createChat({ message: "hello" });
    const result = await cli("send", chat.id, "thanks");
    expectOk(result);
    const latest = (await client.listMessages(chat.id, { limit: 1 })).data[0]!;
    expect(result.stdout).toContain(`id:\t${latest.id}\n`);
    expect(result.stdout).toContain("role:\tassistant\n");
  });
});

describe("pending <chatId>", () => {
  it("--json prints { chat, pending } as getChat and getPendingTask return them", async () => {
    const chat = await client.createChat({ message: "I need a database" });
    const result = await cli("pending", chat.id, "--json");
    expectOk(result);
    expect(jsonOf(result)).toEqual({
      chat: await client.getChat(chat.id),
      pending: JSON.parse(JSON.stringify(await client.getPendingTask(chat.id))),
    });
  });

  it("a chat that waits for nothing says so, with exit 0", async () => {
    const chat = await client.createChat({ message: "hello" });
    const result = await cli("pending", chat.id);
    expectOk(result);
    expect(result.stdout).toContain("pending:\tnothing\n");
    expect(await cli("pending", chat.id, "--json").then(jsonOf)).toMatchObject({ pending: null });
  });
});

describe("preview <chatId> [--open]", () => {
  it("--json prints what getPreview returns; plain text is the URL alone", async () => {
    const chat = await client.createChat({ message: "hello" });
    const preview = await client.getPreview(chat.id);
    const json = await cli("preview", chat.id, "--json");
    expectOk(json);
    expect(jsonOf(json)).toEqual(preview);
    const plain = await cli("preview", chat.id);
    expect(plain.stdout).toBe(`${preview.url}\n`);
  });
});
