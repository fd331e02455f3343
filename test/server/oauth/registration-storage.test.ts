/** Registrations on disk: appended, never a whole-file rewrite per change, and bounded however large the requests; through the server's handler, no port. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import { authorizeUrl, CALLBACK_URL, pkcePair, startInProcessTestServer } from "./helpers.js";

/**
 * Each registration is one fsynced line appended to the data file, and a thousand fsyncs wait on the disk (all the more beside other
 * jobs) while these tests count bytes, not durability: a memory-backed folder where the system has one.
 */
const memoryBacked = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

let dir: string;
let dataFile: string;
let server: ReferenceServer | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(memoryBacked, "oauth-storage-"));
  dataFile = join(dir, "state.json");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const start = async () => {
  server = startInProcessTestServer({ autoApprove: "acme", dataFile, oauthRateLimit: false });
  return server;
};

/** The padded registration's bytes, made once per size: the same request is sent hundreds of times. */
const paddedBodies = new Map<number, Uint8Array<ArrayBuffer>>();
function paddedBody(padding: number): Uint8Array<ArrayBuffer> {
  let body = paddedBodies.get(padding);
  if (!body) {
    body = new TextEncoder().encode(
      JSON.stringify({
        client_name: "padded client",
        redirect_uris: [CALLBACK_URL],
        token_endpoint_auth_method: "none",
        jwks: { keys: [{ kty: "oct", k: "k".repeat(padding) }] },
      }),
    );
    paddedBodies.set(padding, body);
  }
  return body;
}

async function register(baseUrl: string, padding: number): Promise<{ status: number; clientId?: string }> {
  const response = await fetch(`${baseUrl}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: paddedBody(padding),
  });
  const body = (await response.json()) as { client_id?: string };
  return { status: response.status, ...(body.client_id ? { clientId: body.client_id } : {}) };
}

/** Bytes of the data file (and of any file beside it). */
function bytesOnDisk(): number {
  return readdirSync(dir)
    .filter((name) => name.startsWith("state.json"))
    .reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

describe("600 registrations of ~60 KB from one address (the attack review's case)", () => {
  it("are refused as too large, and the data file does not grow", async () => {
    const { url } = await start();
    const before = bytesOnDisk();
    const statuses = new Set<number>();
    for (let i = 0; i < 600; i++) statuses.add((await register(url, 60_000)).status);
    expect([...statuses]).toEqual([400]);
    expect(bytesOnDisk()).toBe(before);
  }, 120_000);

  it("at ~12 KB (under the body cap) are kept trimmed: 600 of them stay well under a megabyte on disk", async () => {
    const { url } = await start();
    const before = bytesOnDisk();
    for (let i = 0; i < 600; i++) expect((await register(url, 12_000)).status).toBe(201);
    // 600 x 12 KB is 7 MB sent; what is kept is the metadata the server uses (a few hundred bytes each).
    expect(bytesOnDisk() - before).toBeLessThan(600 * 1024);
  }, 120_000);
});

describe("a registration is appended to the data file, not a rewrite of it", () => {
  it("the data file stays the same file while registrations are appended to it, and a restart keeps them", async () => {
    const { url } = await start();
    const snapshot = statSync(dataFile);
    const clientIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { clientId } = await register(url, 10);
      clientIds.push(clientId ?? "");
    }
    const after = statSync(dataFile);
    // A rewrite (temp file + rename) would give the data file a new inode each time.
    expect(after.ino).toBe(snapshot.ino);
    const lines = readFileSync(dataFile, "utf8").trim().split("\n");
    expect(lines.length).toBe(1 + 20);
    expect(lines[0]!.length + 1).toBe(snapshot.size);
    for (const line of lines.slice(1)) expect(line.length).toBeLessThan(2048);

    await server?.close();
    server = undefined;
    expect(readFileSync(dataFile, "utf8").trim().split("\n").length).toBe(1);
    const restarted = await start();
    for (const clientId of [clientIds[0], clientIds[19]]) {
      const response = await fetch(
        authorizeUrl(restarted.url, {
          client_id: clientId,
          redirect_uri: CALLBACK_URL,
          code_challenge: pkcePair().challenge,
        }),
        { redirect: "manual" },
      );
      await response.body?.cancel();
      expect(response.status).toBe(302);
    }
  });
});
