/**
 * Escape injection through chat-cli: titles, message content and server error messages full of terminal
 * controls (OSC 0 title, OSC 52 clipboard, OSC 8 link, clear screen, carriage return, C1 CSI, bidi override)
 * are shown in a visible form and never reach the terminal raw, also on a pseudo-terminal where tables truncate.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { BIN, cleanEnv, runCli, runProcess } from "../cli/helpers.js";
import { needsPty, PTY_RUN, ptyPython } from "../cli/pty.js";

const HOSTILE =
  "\u001b]0;pwned-title\u0007\u001b]52;c;cHduZWQ=\u0007\u001b]8;;http://evil.example/\u0007click\u001b]8;;\u0007" +
  "\u001b[2J\u001b[H\roverwritten\b\u009b31mred\u202eevil";

let server: ReferenceServer;
let chatId: string;
let messageId: string;
let env: Record<string, string>;
beforeAll(async () => {
  server = await startReferenceServer({ port: 0, host: "127.0.0.1" });
  const key = server.apiKeys.acme!;
  // One team member stores controls in a title and a message; another lists the team's chats.
  const client = new ChatClient({ baseUrl: server.url, token: key });
  const chat = await client.createChat({ title: HOSTILE, message: `hello ${HOSTILE}` });
  chatId = chat.id;
  const page = await client.listMessages(chat.id);
  messageId = page.data.find((message) => message.content?.includes("pwned"))!.id;
  env = cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: key, TERM: "xterm" });
});
afterAll(async () => {
  await server?.close();
});

/** Fails when `output` carries a control character that acts (our own SGR colours and CR-LF line ends aside). */
function expectNothingActs(output: string, where: string) {
  const withoutOwnColours = output.replace(/\u001b\[[0-9;]*m/g, "").replace(/\r\n/g, "\n");
  expect(withoutOwnColours, where).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
}

describe("chat-cli shows server text with its controls made visible", () => {
  for (const args of [["list"], ["get"], ["messages"]]) {
    it(`${args[0]} (plain output)`, async () => {
      const result = await runCli([...args, ...(args[0] === "list" ? [] : [chatId])], { env });
      expect(result.code).toBe(0);
      expectNothingActs(result.stdout + result.stderr, args[0]!);
      expect(result.stdout).toContain("^[]0;pwned-title^G");
      expect(result.stdout).toContain("^[[31mred<U+202E>evil");
    });
  }

  it("--json keeps the exact title, with every control escaped", async () => {
    const result = await runCli(["get", chatId, "--json"], { env });
    expectNothingActs(result.stdout, "--json");
    expect((JSON.parse(result.stdout) as { title: string }).title).toBe(HOSTILE);
  });

  it("on a terminal: the table (truncated to its width) and the message view", needsPty, async () => {
    for (const args of [["list"], ["messages", chatId], ["message", chatId, messageId]]) {
      const result = await runProcess(ptyPython!, [PTY_RUN, "", "", "--", process.execPath, BIN, ...args], {
        env: { ...env, COLUMNS: "60" },
      });
      expectNothingActs(result.stdout, args.join(" "));
      expect(result.stdout).toMatch(/\^\[\]0;pwned/);
    }
  });
});

describe("a server whose error message carries controls", () => {
  let hostile: Server;
  let url: string;
  beforeAll(async () => {
    hostile = createServer((_request, response) => {
      response
        .writeHead(500, { "Content-Type": "application/json" })
        .end(JSON.stringify({ error: { code: "internal", message: `boom ${HOSTILE}` } }));
    });
    await new Promise<void>((done) => hostile.listen(0, "127.0.0.1", done));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => hostile.close(() => done())));

  it("is printed on stderr with its controls visible, with and without --debug", async () => {
    for (const extra of [[], ["--debug"]]) {
      const result = await runCli(["--base-url", url, ...extra, "list"], {
        env: cleanEnv({ CHAT_API_KEY: "key-for-a-hostile-server" }),
      });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("boom ^[]0;pwned-title^G");
      expectNothingActs(result.stdout + result.stderr, `stderr ${extra.join(" ")}`);
    }
  });
});
