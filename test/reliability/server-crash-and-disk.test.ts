/** The reference server's data file under faults: SIGKILL during a burst of writes, and a data file that cannot be written. */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReferenceServer } from "../../src/server/index.js";
import { Store } from "../../src/server/store.js";
import { ChatSchema, ErrorBodySchema, MessageSchema } from "../../src/wire/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import { bundleServerChild, type ChildServer, killChild, startChildServer } from "./fixtures/child-server.js";
import { snapshotAccount } from "./fixtures/wire-checks.js";

const root = scratchDir("chat-reliability-disk-");
beforeAll(() => bundleServerChild(), 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Endpoint {
  url: string;
  apiKeys: Record<string, string>;
}

async function post(server: Endpoint, path: string, body: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKeys.acme}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** What the server acknowledged: chats created (201) and assistant replies sent back (200). */
interface Acknowledged {
  chatIds: string[];
  replies: Array<{ chatId: string; messageId: string }>;
}

/** Workers create chats and send messages until the server dies; every 2xx received is recorded. */
async function burstUntilKilled(server: ChildServer, acked: Acknowledged, killAfter: number): Promise<void> {
  let ackedThisRun = 0;
  const worker = async (w: number) => {
    // Bounded: at most 60 writes per worker even if the kill never lands.
    for (let i = 0; i < 60; i++) {
      try {
        const own = acked.chatIds.at(-1 - w);
        if (i % 3 === 2 && own) {
          const reply = await post(server, `/v2/chats/${own}/messages`, { message: `follow-up ${w}.${i}` });
          if (reply.status !== 200) throw new Error(`send answered ${reply.status}`);
          acked.replies.push({ chatId: own, messageId: MessageSchema.parse(reply.body).id });
        } else {
          const reply = await post(server, "/v2/chats", { message: `burst ${w}.${i} ${"x".repeat(500)}` });
          if (reply.status !== 201) throw new Error(`create answered ${reply.status}`);
          acked.chatIds.push(ChatSchema.parse(reply.body).id);
        }
        ackedThisRun += 1;
        if (ackedThisRun === killAfter) server.child.kill("SIGKILL");
      } catch (error) {
        if (error instanceof TypeError) return; // fetch failed: the server is gone
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
  await killChild(server);
}

describe("Server SIGKILLed during a burst of writes, restarted on the same data file", () => {
  it("after each of three kills the file parses and every acknowledged create and reply is there", async () => {
    const dataFile = join(root, "crash", "state.json");
    const acked: Acknowledged = { chatIds: [], replies: [] };
    for (const killAfter of [15, 30, 45]) {
      const server = await startChildServer({ dataFile });
      await burstUntilKilled(server, acked, killAfter);
      expect(() => new Store({ dataFile })).not.toThrow();
      expect(() => JSON.parse(readFileSync(dataFile, "utf8"))).not.toThrow();
    }
    expect(acked.chatIds.length + acked.replies.length).toBeGreaterThanOrEqual(15 + 30 + 45);

    const restarted = await startChildServer({ dataFile });
    try {
      const chats = await snapshotAccount(restarted, "acme");
      for (const chatId of acked.chatIds) {
        const chat = chats.get(chatId);
        expect(chat, `acknowledged chat ${chatId}`).toBeDefined();
        // A create is acknowledged only after the user's message and the assistant's answer were both saved.
        expect(chat?.messages.map((message) => message.role).slice(0, 2)).toEqual(["user", "assistant"]);
      }
      for (const { chatId, messageId } of acked.replies) {
        expect(chats.get(chatId)?.messages.some((message) => message.id === messageId)).toBe(true);
      }
      // Temp files of the killed processes are cleaned up by the next start.
      expect(readdirSync(join(root, "crash"))).toEqual(["state.json"]);
    } finally {
      await killChild(restarted);
    }
  }, 60_000);
});

describe("A data file that cannot be written: a clear error, no crash, no half-written file", () => {
  it("at start, when the data file's parent is a regular file: startReferenceServer rejects naming the file", async () => {
    const notADir = join(root, "plain-file");
    writeFileSync(notADir, "not a directory\n");
    const dataFile = join(notADir, "state.json");
    await expect(startReferenceServer({ dataFile })).rejects.toThrow(
      new RegExp(`data file ${dataFile.replace(/[/.]/g, "\\$&")}: ENOTDIR`),
    );
    expect(readFileSync(notADir, "utf8")).toBe("not a directory\n");
  });

  it("at start, under /proc (no files can be created there)", async () => {
    await expect(startReferenceServer({ dataFile: "/proc/chat-reliability/state.json" })).rejects.toThrow(
      /data file \/proc\/chat-reliability\/state\.json: E/,
    );
  });

  it("at start, on a truncated data file: refuses to start and leaves the file as it was", async () => {
    const dataFile = join(root, "truncated.json");
    writeFileSync(dataFile, '{"version":1,"seq":3,"chats":[{"id":"ch');
    await expect(startReferenceServer({ dataFile })).rejects.toThrow(
      /truncated\.json is not a reference-server store/,
    );
    expect(readFileSync(dataFile, "utf8")).toBe('{"version":1,"seq":3,"chats":[{"id":"ch');
  });

  it("while running, when the directory is replaced by a file: 500 internal, the change is rolled back, the server recovers", async () => {
    const dir = join(root, "vanishing");
    const dataFile = join(dir, "state.json");
    const server = await startReferenceServer({ port: 0, dataFile });
    try {
      const kept = await post(server, "/v2/chats", { message: "saved before the fault" });
      expect(kept.status).toBe(201);

      rmSync(dir, { recursive: true });
      writeFileSync(dir, "the disk went away\n");
      const refused = await post(server, "/v2/chats", { message: "during the fault" });
      expect(refused.status).toBe(500);
      const error = ErrorBodySchema.parse(refused.body).error;
      expect(error.code).toBe("internal");
      expect(error.message).toMatch(/could not save the change.*nothing was changed/);
      expect(error.message).not.toContain(dir);
      const during = await snapshotAccount(server, "acme");
      expect([...during.keys()]).toEqual([kept.body.id]);

      rmSync(dir);
      mkdirSync(dir);
      const after = await post(server, "/v2/chats", { message: "saved after the fault" });
      expect(after.status).toBe(201);
      const saved = new Store({ dataFile }).chatsOf("acme").map((chat) => chat.id);
      expect(saved.sort()).toEqual([kept.body.id, after.body.id].sort());
    } finally {
      await server.close();
    }
  });

  it("while running, when the file size limit is hit (disk full): 500, rolled back, no temp file, intact after restart", async () => {
    const dir = join(root, "full");
    const dataFile = join(dir, "state.json");
    mkdirSync(dir);
    // RLIMIT_FSIZE of 64 KiB with SIGXFSZ ignored: writes past it fail with EFBIG, like a full disk.
    const limited = await startChildServer({ dataFile, shellPrefix: "trap '' XFSZ; ulimit -f 64;" });
    const acknowledged: string[] = [];
    let refusal: { status: number; body: unknown } | undefined;
    try {
      for (let i = 0; i < 40 && !refusal; i++) {
        const reply = await post(limited, "/v2/chats", { message: `${i} ${"y".repeat(8_000)}` });
        if (reply.status === 201) acknowledged.push(reply.body.id);
        else refusal = reply;
      }
      expect(refusal?.status).toBe(500);
      expect(ErrorBodySchema.parse(refusal?.body).error.message).toMatch(/EFBIG/);
      expect(limited.stderr()).toMatch(/cannot write the data file .*state\.json/);
      // Still serving, and what it serves matches the file: the refused chat is not there.
      expect([...(await snapshotAccount(limited, "acme")).keys()].sort()).toEqual([...acknowledged].sort());
      // No temp file: the acknowledged changes are lines appended to the data file (folded in on restart).
      expect(readdirSync(dir)).toEqual(["state.json"]);
    } finally {
      await killChild(limited);
    }

    const restarted = await startChildServer({ dataFile });
    try {
      expect([...(await snapshotAccount(restarted, "acme")).keys()].sort()).toEqual([...acknowledged].sort());
    } finally {
      await killChild(restarted);
    }
    expect(existsSync(dataFile)).toBe(true);
  }, 30_000);
});
