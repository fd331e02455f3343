/** The integration flow through chat-cli, in-process on the reference server's handler, and resolve's refusals, each checked before anything is sent. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { MessageSchema } from "../../src/wire/index.js";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { type CliResult, cleanEnv, jsonOf, runInProcess } from "./helpers.js";

const server = createRequestableReferenceServer();
afterAll(() => server.close());
const acme = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme!, fetch: server.fetch });
const studio = new ChatClient({ baseUrl: server.url, token: server.apiKeys.studio!, fetch: server.fetch });
const env = cleanEnv();
const run = runInProcess(env, { fetch: server.fetch });

/** As the acme team, through --base-url and --token. */
const cli = (...args: string[]): Promise<CliResult> =>
  run(["--base-url", server.url, "--token", server.apiKeys.acme!, ...args]);

function expectOneLineError(result: CliResult, code: number, pattern: RegExp): void {
  expect(result.code).toBe(code);
  expect(result.stdout).toBe("");
  const [first, ...rest] = result.stderr.trimEnd().split("\n");
  expect(first).toMatch(/^error: /);
  expect(first).toMatch(pattern);
  expect(rest.length).toBeLessThanOrEqual(1); // at most one hint line
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe("integration flow: create -> pending -> resolve --connected -> pending -> resolve --approve -> preview", () => {
  it("walks the whole flow with chat-cli alone", async () => {
    const created = await cli("create", "Add a database to my app", "--json");
    expect(created.code).toBe(0);
    const chatId = (jsonOf(created) as { id: string }).id;

    const first = await cli("pending", chatId);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("pending:\tintegration\n");
    expect(first.stdout).toContain("integrations:\tNeon\n");
    expect(first.stdout).toMatch(/^hostProjectId:\thostprj_/m);

    const connected = await cli("resolve", chatId, "--connected", "--json");
    expect(connected.code).toBe(0);
    const afterConnect = MessageSchema.parse(jsonOf(connected));
    expect(afterConnect.finishReason).toBe("tool-calls");

    const second = await cli("pending", chatId);
    expect(second.stdout).toContain("pending:\tpermissions\n");
    expect(second.stdout).toContain("script:\t/scripts/setup-db.sql");
    expect(second.stderr).toContain(`chat-cli resolve ${chatId} --approve`);

    const approved = await cli("resolve", chatId, "--approve");
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain("finish:\tstop\n");
    expect(await acme.getPendingTask(chatId)).toBeNull();

    const preview = await cli("preview", chatId);
    expect(preview.code).toBe(0);
    expect(preview.stdout).toBe(`${(await acme.getPreview(chatId)).url}\n`);
  });

  it("--integrations with the requested names resumes the chat like --connected", async () => {
    const chat = await acme.createChat({ message: "database please" });
    const result = await cli("resolve", chat.id, "--integrations", "Neon");
    expect(result.code).toBe(0);
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("permissions");
  });
});

describe("resolve refuses before sending anything", () => {
  it("wrong integration names: exit 1, explains the mismatch, the chat still waits", async () => {
    const chat = await acme.createChat({ message: "database please" });
    const result = await cli("resolve", chat.id, "--integrations", "Postgres,Neon");
    expectOneLineError(result, 1, /asks for Neon, you gave Postgres, Neon/);
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("a chat without hostProjectId: pending says the flow cannot proceed, --connected exits 1", async () => {
    const chat = await studio.createChat({ message: "database please" });
    const token = server.apiKeys.studio!;
    const pending = await run(["--base-url", server.url, "--token", token, "pending", chat.id]);
    expect(pending.stdout).toContain("hostProjectId:\tnone: the integration flow cannot proceed\n");
    expect(pending.stderr).toContain("the integration flow cannot proceed");
    const result = await run(["--base-url", server.url, "--token", token, "resolve", chat.id, "--connected"]);
    expectOneLineError(result, 1, /no hostProjectId: the integration flow cannot proceed/);
    expect((await studio.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("--reject on a permission pause exits 3 (a wrong-kind flag), explains that a follow-up message rejects it and suggests send", async () => {
    const chat = await acme.createChat({ message: "database please" });
    await acme.confirmIntegrations(chat.id);
    const result = await cli("resolve", chat.id, "--reject");
    expectOneLineError(result, 3, /rejected by sending any follow-up message/);
    expect(result.stderr).toContain(`chat-cli send ${chat.id}`);
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("permissions");
  });

  it("--approve when nothing waits: exit 1, nothing to resolve", async () => {
    const chat = await acme.createChat({ message: "hello" });
    expectOneLineError(await cli("resolve", chat.id, "--approve"), 1, /not waiting for anything/);
  });

  it("malformed --task JSON: exit 2 (a bad flag value), one line", async () => {
    const chat = await acme.createChat({ message: "database please" });
    expectOneLineError(await cli("resolve", chat.id, "--task", "{not json"), 2, /--task is not valid JSON/);
    expectOneLineError(
      await cli("resolve", chat.id, "--task", '{"type":"confirmed-steps"}'),
      2,
      /--task: "connectedIntegrationNames" is missing/,
    );
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("two choices at once, or none off a terminal: exit 2", async () => {
    const chat = await acme.createChat({ message: "database please" });
    expectOneLineError(await cli("resolve", chat.id, "--approve", "--reject"), 2, /one of/);
    expectOneLineError(await cli("resolve", chat.id), 2, /resolve needs one of/);
  });
});

describe("resolve --reject and --task", () => {
  it("--reject on an integration pause sends confirmed-steps [] and the chat goes on without it", async () => {
    const chat = await acme.createChat({ message: "database please" });
    const result = await cli("resolve", chat.id, "--reject", "--json");
    expect(result.code).toBe(0);
    expect(await acme.getPendingTask(chat.id)).toBeNull();
  });

  it("--task @file sends the task in the file unchanged", async () => {
    const chat = await acme.createChat({ message: "database please" });
    const file = join(env.CHAT_CONFIG_DIR!, "task.json");
    writeFileSync(file, JSON.stringify({ type: "confirmed-steps", connectedIntegrationNames: ["Neon"] }));
    const result = await cli("resolve", chat.id, "--task", `@${file}`, "--json");
    expect(result.code).toBe(0);
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("permissions");
  });
});

describe("409: the chat has moved on", () => {
  it("a task that no longer matches exits 3 and says how to see the latest request", async () => {
    const chat = await acme.createChat({ message: "database please" });
    await acme.confirmIntegrations(chat.id);
    const stale = JSON.stringify({ type: "confirmed-steps", connectedIntegrationNames: ["Neon"] });
    const result = await cli("resolve", chat.id, "--task", stale);
    expectOneLineError(result, 3, /has moved on/);
    expect(result.stderr).toContain(`chat-cli pending ${chat.id}`);
  });
});

describe("send while paused rejects the pending permission request", () => {
  it("after a follow-up message nothing is pending any more", async () => {
    const chat = await acme.createChat({ message: "database please" });
    await acme.confirmIntegrations(chat.id);
    const result = await cli("send", chat.id, "no, skip the script");
    expect(result.code).toBe(0);
    expect(await acme.getPendingTask(chat.id)).toBeNull();
  });
});
