/**
 * The smaller items of the attack review: `--task @file` on a FIFO, a device, a huge or a secret file; `/v2`
 * answers cached; a `publicUrl` that injects challenge parameters; a `resource_metadata` URL on another origin.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReferenceServer } from "../../src/server/index.js";
import { startTinyOAuthServer } from "../auth/fixtures/tiny-oauth-server.js";
import { cleanEnv, runCli } from "../cli/helpers.js";
import { scratchDir } from "../support/scratch-dir.js";
import { HTTP_BROWSER, PROTOCOL_VERSION, spawnBridgeDriver } from "./fixtures/bridge-driver.js";

const dir = scratchDir("cmb-small-");

describe("chat-cli resolve --task @file", () => {
  // Nothing listens there: every case must be refused before anything is sent.
  const env = cleanEnv({ CHAT_API_KEY: "key-for-task-files", CHAT_API_URL: "http://127.0.0.1:9" });
  const resolveWith = (file: string) =>
    runCli(["resolve", "chat_1", "--task", `@${file}`], { env, timeoutMs: 10_000 });

  it("refuses a FIFO at once instead of waiting for a writer", async () => {
    const fifo = join(dir, "task.fifo");
    execFileSync("mkfifo", [fifo]);
    const result = await resolveWith(fifo);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/not a regular file/);
  });

  it("refuses /dev/zero without reading it", async () => {
    const result = await resolveWith("/dev/zero");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/not a regular file/);
  });

  it("refuses a file over 1 MiB", async () => {
    const big = join(dir, "big.json");
    writeFileSync(big, `{"type":"confirmed-steps","pad":"${"x".repeat(2 * 1024 * 1024)}"}`);
    const result = await resolveWith(big);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/larger than 1048576 bytes/);
  });

  it("never quotes the file's content in its parse error", async () => {
    const secret = join(dir, "not-json");
    writeFileSync(secret, "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n");
    const result = await resolveWith(secret);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--task is not valid JSON/);
    expect(result.stderr).not.toMatch(/AWS_SECRET|wJalr/);
  });
});

describe("the reference server", () => {
  let server: Awaited<ReturnType<typeof startReferenceServer>>;
  beforeAll(async () => {
    server = await startReferenceServer({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => server.close());

  it("answers /v2 JSON, success and error alike, with Cache-Control: no-store", async () => {
    const ok = await fetch(`${server.url}/v2/chats`, {
      headers: { Authorization: `Bearer ${server.apiKeys.acme}` },
    });
    const refused = await fetch(`${server.url}/v2/chats`);
    for (const response of [ok, refused]) {
      await response.body?.cancel();
      expect(response.headers.get("cache-control")).toBe("no-store");
    }
    expect([ok.status, refused.status]).toEqual([200, 401]);
  });

  it("refuses a publicUrl that could inject parameters into WWW-Authenticate, or is not plain http(s)", async () => {
    for (const publicUrl of [
      'https://chat.example/", error="injected',
      "https://chat.example/a b",
      "https://user:pw@chat.example",
      "https://chat.example/?x=1",
      "javascript:alert(1)",
      "not a url",
    ]) {
      await expect(startReferenceServer({ port: 0, publicUrl }), publicUrl).rejects.toThrow(/publicUrl/);
    }
    const fine = await startReferenceServer({
      port: 0,
      host: "127.0.0.1",
      publicUrl: "https://Chat.Example/base/",
    });
    try {
      expect(fine.url).toBe("https://chat.example/base");
    } finally {
      await fine.close();
    }
  });
});

describe("the bridge and a resource_metadata URL on another origin", () => {
  it("does not fetch it, and signs in through the MCP server's own well-known metadata", async () => {
    const elsewhere: string[] = [];
    const other = createServer((request, response) => {
      elsewhere.push(`${request.method} ${request.url}`);
      response.writeHead(404).end();
    });
    await new Promise<void>((done) => other.listen(0, "127.0.0.1", done));
    const otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const tiny = await startTinyOAuthServer({
      challengeResourceMetadata: `${otherOrigin}/.well-known/oauth-protected-resource/internal-admin`,
    });
    const bridge = spawnBridgeDriver(["--token-store", "file", "--auth-timeout", "10", tiny.resourceUrl], {
      CHAT_CONFIG_DIR: join(dir, "config-metadata"),
      BROWSER: `${process.execPath} ${HTTP_BROWSER}`,
    });
    try {
      const id = bridge.request("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "victim", version: "1" },
      });
      await bridge.waitAnswered([id], 20_000);
      expect(bridge.answersTo(id)[0]?.error).toBeUndefined();
      expect(elsewhere).toEqual([]);
    } finally {
      await bridge.stop(3_000);
      await tiny.close();
      await new Promise<void>((done) => other.close(() => done()));
    }
  }, 40_000);
});
