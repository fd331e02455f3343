/** chat-cli at a terminal, in-process with fake terminal streams: resolve asks (default No) and answers by the reply; off a terminal it is a usage error (the real pty: process.test.ts). */
import { afterAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { cleanEnv, recordingIo, runInProcess, stripAnsi } from "./helpers.js";

const server = createRequestableReferenceServer();
afterAll(() => server.close());
const client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme!, fetch: server.fetch });
const run = runInProcess(
  cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: server.apiKeys.acme!, TERM: "xterm" }),
  {
    fetch: server.fetch,
  },
);

/** Runs chat-cli on fake terminal streams; the prompt gets `answer`. Output is stdout and stderr together, as on a pty. */
async function onTerminal(args: string[], answer: string) {
  const questions: string[] = [];
  const io = recordingIo({
    isTTY: true,
    interactive: true,
    color: true,
    errColor: true,
    prompt: async (question) => {
      questions.push(question);
      return answer;
    },
  });
  const result = await run(args, io);
  return { code: result.code, output: stripAnsi(result.stdout + result.stderr), questions };
}

describe("resolve with no flag on a terminal", () => {
  it("shows what is pending and asks; Enter (default No) sends nothing", async () => {
    const chat = await client.createChat({ message: "database please" });
    const result = await onTerminal(["resolve", chat.id], "");
    expect(result.questions.join("")).toContain("Resolve? [y/N]");
    expect(result.code).toBe(0);
    expect(result.output).toMatch(/integrations:\s+Neon/);
    expect(result.output).toContain("Nothing sent.");
    expect((await client.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it('"y" resolves what is pending', async () => {
    const chat = await client.createChat({ message: "database please" });
    const result = await onTerminal(["resolve", chat.id], "y");
    expect(result.questions.join("")).toContain("Resolve? [y/N]");
    expect(result.code).toBe(0);
    expect((await client.getPendingTask(chat.id))?.kind).toBe("permissions");
    const again = await onTerminal(["resolve", chat.id], "y");
    expect(again.output).toContain("/scripts/setup-db.sql");
    expect(again.code).toBe(0);
    expect(await client.getPendingTask(chat.id)).toBeNull();
  });

  it("off a terminal the same command is a usage error (exit 2) and sends nothing", async () => {
    const chat = await client.createChat({ message: "database please" });
    const result = await run(["resolve", chat.id]);
    expect(result.code).toBe(2);
    expect((await client.getPendingTask(chat.id))?.kind).toBe("integration");
  });
});
