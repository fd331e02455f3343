/** chat-cli's output in-process: commands called as plain functions with a recording IO, and the formatting rules. */
import { describe, expect, it } from "vitest";
import { listCommand } from "../../src/cli/commands/list.js";
import { parseTaskFlag } from "../../src/cli/commands/resolve.js";
import { accountOfChatUrl } from "../../src/cli/commands/whoami.js";
import { type CliContext, maskToken } from "../../src/cli/context.js";
import { UsageError } from "../../src/cli/errors.js";
import { colorAllowed } from "../../src/cli/io.js";
import { printChatList } from "../../src/cli/output.js";
import { ChatClient } from "../../src/client/index.js";
import type { Chat } from "../../src/wire/index.js";
import { useRequestableReferenceServer } from "../support/reference-request.js";
import { recordingIo } from "./helpers.js";

const chat = (id: string, title: string): Chat => ({
  id,
  object: "chat",
  title,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-02T00:00:00.000Z",
  projectId: "prj_1",
  url: `http://127.0.0.1/acme/chats/${id}`,
});

describe("commands are plain async functions (no argv)", () => {
  const reference = useRequestableReferenceServer();

  it("listCommand.run({ limit }, ctx) writes the page as JSON to the given IO", async () => {
    const { server } = reference;
    const token = server.apiKeys.acme!;
    const client = new ChatClient({ baseUrl: server.url, token, fetch: server.fetch });
    await client.createChat({ message: "hello" });
    const io = recordingIo();
    const ctx: CliContext = {
      io,
      globals: { baseUrl: server.url, token, json: true, color: false, debug: false },
      fetch: server.fetch,
    };
    await listCommand.run({ limit: 5 }, ctx);
    const page = await client.listChats({ limit: 5 });
    expect(JSON.parse(io.out)).toEqual({ object: "list", data: page.data, nextCursor: page.nextCursor });
    expect(io.err).toBe("");
  });
});

describe("tables on a TTY, tab-separated text off it", () => {
  const chats = [chat("chat_a", "First"), chat("chat_bbbb", "Second\nline")];

  it("off a TTY: one line per chat, fields separated by tabs, newlines flattened", () => {
    const io = recordingIo();
    printChatList(io, chats);
    expect(io.out).toBe(
      "chat_a\t2026-01-02T00:00:00.000Z\tFirst\nchat_bbbb\t2026-01-02T00:00:00.000Z\tSecond line\n",
    );
  });

  it("on a TTY: a header row and aligned columns; no escapes without colour", () => {
    const io = recordingIo({ isTTY: true });
    printChatList(io, chats);
    const lines = io.out.trimEnd().split("\n");
    expect(lines[0]).toBe("ID         UPDATED                   TITLE");
    expect(lines[1]).toBe("chat_a     2026-01-02T00:00:00.000Z  First");
    expect(io.out).not.toContain("\u001b[");
  });

  it("on a TTY with colour: the header is bold", () => {
    const io = recordingIo({ isTTY: true, color: true });
    printChatList(io, chats);
    expect(io.out.split("\n")[0]).toContain("\u001b[1m");
  });
});

describe("colour rule", () => {
  it.each([
    [true, true, {}, true],
    [false, true, {}, false],
    [true, false, {}, false],
    [true, true, { NO_COLOR: "1" }, false],
    [false, true, { FORCE_COLOR: "1" }, true],
    [false, true, { FORCE_COLOR: "" }, true],
    [false, true, { FORCE_COLOR: "0" }, false],
    [false, true, { FORCE_COLOR: "false" }, false],
    [false, true, { CLICOLOR_FORCE: "1" }, true],
    [false, true, { CLICOLOR_FORCE: "0" }, false],
    [false, true, { FORCE_COLOR: "1", NO_COLOR: "1" }, false],
    [false, false, { FORCE_COLOR: "1" }, false],
  ])("isTTY=%s, colour flag=%s, env=%j -> %s", (tty, flag, env, expected) => {
    expect(colorAllowed(tty, flag, env)).toBe(expected);
  });
});

describe("whoami helpers", () => {
  it("masks a token to its first and last four characters", () => {
    expect(maskToken("chat_sk_0123456789abcdef")).toBe("chat…cdef");
    expect(maskToken("short")).not.toContain("short");
  });

  it("reads the account slug from a chat URL", () => {
    expect(accountOfChatUrl("http://127.0.0.1:8787/acme/chats/chat_1", "chat_1")).toBe("acme");
    expect(accountOfChatUrl("https://x.example/base/secure-corp/chats/c2", "c2")).toBe("secure-corp");
  });
});

describe("--task parsing", () => {
  it("accepts any task type and the two known ones, strictly", async () => {
    expect(await parseTaskFlag('{"type":"answer-question","answer":"yes"}')).toEqual({
      type: "answer-question",
      answer: "yes",
    });
    await expect(parseTaskFlag('{"type":"confirmed-permissions"}')).rejects.toBeInstanceOf(UsageError);
    await expect(parseTaskFlag("[]")).rejects.toBeInstanceOf(UsageError);
    await expect(parseTaskFlag("@/nonexistent/task.json")).rejects.toThrow(/cannot read/);
  });
});
