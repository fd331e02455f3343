/** chat-cli while the assistant is slow: the spinner shows the elapsed time, Ctrl-C exits 130 and says how to check. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { BIN, cleanEnv, requestWatch, runCli, runProcess, stripAnsi } from "./helpers.js";
import { needsPty, PTY_RUN, ptyPython } from "./pty.js";

/** Long enough that the elapsed time shows (after 3 s) and the test interrupts the wait well before it ends. */
const ASSISTANT_DELAY_MS = 6000;

let server: ReferenceServer;
let client: ChatClient;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startReferenceServer({ assistantDelayMs: ASSISTANT_DELAY_MS });
  client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.personal as string });
  env = cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: server.apiKeys.personal, TERM: "xterm" });
});
afterAll(() => server?.close());

describe("the spinner on a terminal", needsPty, () => {
  it("shows the elapsed time after a few seconds; Ctrl-C there exits 130, and the chat is still created", async () => {
    const result = await runProcess(
      ptyPython as string,
      [PTY_RUN, "Waiting for the assistant… 3s", "\u0003", "--", process.execPath, BIN, "create", "slow one"],
      { env, timeoutMs: 25_000 },
    );
    const output = stripAnsi(result.stdout);
    expect(output).toContain("Waiting for the assistant… 3s");
    expect(output).toContain(
      "interrupted while waiting for the assistant; the request was sent and may still complete",
    );
    // The chat only shows in `list` once the assistant has answered: the advice says so, lest a user create it twice.
    expect(output).toMatch(/may still complete for a while/);
    expect(output).toContain(
      "`chat-cli list --limit 1` shows it only once the assistant has answered, which can take minutes: look there before you run this again.",
    );
    expect(result.code).toBe(130);
    await expect
      .poll(async () => (await client.listChats({ limit: 1 })).data[0]?.title, {
        timeout: ASSISTANT_DELAY_MS + 5000,
      })
      .toBe("slow one");
  }, 30_000);
});

describe("Ctrl-C while waiting for the assistant (no terminal)", () => {
  it("send: exits 130 at once, says the message may still be answered and how to check; it is answered", async () => {
    const chatId =
      (await client.listChats({ limit: 1 })).data[0]?.id ??
      (await client.createChat({ message: "hello" })).id;
    // Ctrl-C once the POST has reached the server (an event, not a guessed delay).
    const watch = await requestWatch(server.url, "POST");
    const result = await runCli(["--base-url", watch.url, "send", chatId, "are you there?"], {
      env,
      sigintOn: watch.requested,
    }).finally(() => watch.close());
    expect(result.code).toBe(130);
    // "At once" as an event: when the CLI has exited, the assistant's reply has not arrived yet.
    expect((await client.listMessages(chatId, { limit: 10 })).data.length).toBeLessThan(4);
    expect(result.stderr).toContain("the request was sent and may still complete for a while");
    expect(result.stderr).toContain(
      `\`chat-cli messages ${chatId} --limit 2\` shows it only once the assistant has answered`,
    );
    expect(result.stdout).toBe("");
    // The server goes on: the reply arrives although nobody waits for it.
    await expect
      .poll(async () => (await client.listMessages(chatId, { limit: 10 })).data.length, {
        timeout: ASSISTANT_DELAY_MS + 5000,
        interval: 250,
      })
      .toBe(4);
    const [reply, sent] = (await client.listMessages(chatId, { limit: 2 })).data;
    expect([sent?.content, reply?.role]).toEqual(["are you there?", "assistant"]);
  }, 30_000);
});
