/** doctor speaks the server's era: server/discover + tools/list to a 2026-07-28 server, initialize to a 2025 one. */
import { execFile } from "node:child_process";
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBridgeArgs } from "../../../../src/bridge/command/arguments.js";
import type { DoctorReport } from "../../../../src/bridge/doctor/index.js";
import { eraVerdictStore } from "../../../../src/bridge/upstream/probe.js";
import { type ReferenceServer, startReferenceServer } from "../../../../src/server/index.js";
import { scratchDir } from "../../../support/scratch-dir.js";
import { BRIDGE_BIN } from "../../fixtures/spawn-bridge.js";
import { ALL_PASS, checkOf, runDoctorArgs, statusOf } from "../fixtures/doctor-command.js";

const browserScript = resolve(import.meta.dirname, "../../../auth/fixtures/http-browser.mjs");
const run = promisify(execFile);

/** A reference server of one era, signed in to with a file token store in its own config folder. */
async function signedInServer(mcpEra: "modern" | "legacy") {
  const server = await startReferenceServer({ port: 0, autoApprove: "acme", mcpEra });
  const configDir = join(scratchDir(`cmb-doctor-${mcpEra}-`), "config");
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    CHAT_CONFIG_DIR: configDir,
    BROWSER: `${process.execPath} ${browserScript}`,
  };
  await run(process.execPath, [BRIDGE_BIN, "login", "--token-store", "file", server.mcpUrl], { env });
  return { server, env, configDir };
}

/** The verdict the bridge will start with, from the same store the bridge reads. */
function rememberedVerdict(url: string, env: Record<string, string>) {
  const command = parseBridgeArgs(["node", "chat-mcp-bridge", "--token-store", "file", url], env);
  if (command.kind !== "relay") throw new Error("not parsed as the relay");
  return eraVerdictStore(command.options, env);
}

const doctor = (url: string, env: Record<string, string | undefined>, write?: (text: string) => void) =>
  runDoctorArgs(["--token-store", "file", url], env, write);

describe("doctor against a 2026-07-28-only server", () => {
  let modern: Awaited<ReturnType<typeof signedInServer>>;
  beforeAll(async () => {
    modern = await signedInServer("modern");
  });
  afterAll(async () => {
    await modern?.server.close();
  });

  it("passes every check: the era is 2026-07-28, and tools/list goes as a stateless request", async () => {
    const lines: string[] = [];
    const report = await doctor(modern.server.mcpUrl, modern.env, (text) => lines.push(text));
    expect(statusOf(report)).toEqual(ALL_PASS);
    expect(report.ok).toBe(true);
    expect(checkOf(report, "era").detail).toMatch(
      /^2026-07-28 \(stateless requests\): server\/discover answered; versions 2026-07-28/,
    );
    const live = checkOf(report, "live");
    expect(live.title).toBe("Live server/discover + tools/list");
    expect(live.detail).toMatch(
      /answered server\/discover \(protocol 2026-07-28, stateless\) and listed 7 tools$/,
    );
    expect(lines.join("")).toMatch(/^✓ Protocol era: 2026-07-28 \(stateless requests\)/m);
    expect(lines.join("")).toMatch(/^✓ Live server\/discover \+ tools\/list: .* listed 7 tools$/m);
  });

  it("remembers the verdict for the bridge, and says when it corrects an older one", async () => {
    const store = rememberedVerdict(modern.server.mcpUrl, modern.env);
    store.write({ era: "legacy" });
    const report = await doctor(modern.server.mcpUrl, modern.env);
    expect(checkOf(report, "era").detail).toMatch(
      /; the bridge had remembered 2025-11-25 or older \(initialize and sessions\): updated$/,
    );
    expect(await store.read()).toMatchObject({ era: "modern", protocolVersion: "2026-07-28" });
    // Now in agreement: nothing more to say.
    expect(checkOf(await doctor(modern.server.mcpUrl, modern.env), "era").detail).not.toMatch(/remembered/);
  });

  it("a stored token the server refuses fails the era check with the sign-in fix, and no browser opens", async () => {
    const refusedDir = join(scratchDir("cmb-doctor-refused-"), "config");
    cpSync(modern.configDir, refusedDir, { recursive: true });
    const authDir = join(refusedDir, "auth");
    const file = join(authDir, readdirSync(authDir).find((name) => /^[0-9a-f]+\.json$/.test(name))!);
    const login = JSON.parse(readFileSync(file, "utf8"));
    login.tokens.accessToken = "not-a-token-this-server-issued";
    writeFileSync(file, JSON.stringify(login), { mode: 0o600 });

    const report = await doctor(modern.server.mcpUrl, {
      ...modern.env,
      BROWSER: "false",
      CHAT_CONFIG_DIR: refusedDir,
    });
    expect(checkOf(report, "login").status).toBe("pass");
    const era = checkOf(report, "era");
    expect(era.status).toBe("fail");
    expect(era.detail).toMatch(/^server\/discover failed: /);
    expect(era.fix).toBe(
      `sign in again with: chat-mcp-bridge login --token-store file ${modern.server.mcpUrl}`,
    );
    expect(checkOf(report, "live").status).toBe("skip");
  });

  it("a refused login fails the era check with the sign-in fix, and the live check is not tried", async () => {
    const env = { ...modern.env, CHAT_CONFIG_DIR: join(scratchDir("cmb-doctor-modern-none-"), "config") };
    const report = await doctor(modern.server.mcpUrl, env);
    expect(checkOf(report, "login").status).toBe("fail");
    expect(checkOf(report, "era")).toMatchObject({ status: "skip", detail: "not checked (no usable login)" });
    expect(checkOf(report, "live")).toMatchObject({
      status: "skip",
      detail: "not checked (no usable login)",
    });
  });
});

describe("doctor against a 2025-only server", () => {
  let legacy: Awaited<ReturnType<typeof signedInServer>>;
  beforeAll(async () => {
    legacy = await signedInServer("legacy");
  });
  afterAll(async () => {
    await legacy?.server.close();
  });

  it("passes every check: the era is 2025, and the live check is initialize + tools/list in a session", async () => {
    const report = await doctor(legacy.server.mcpUrl, legacy.env);
    expect(statusOf(report)).toEqual(ALL_PASS);
    expect(checkOf(report, "era").detail).toMatch(
      /^2025-11-25 or older \(initialize and sessions\): server\/discover not understood/,
    );
    const live = checkOf(report, "live");
    expect(live.title).toBe("Live initialize + tools/list");
    expect(live.detail).toMatch(/answered initialize \(protocol 2025-\d\d-\d\d\) and listed 7 tools$/);
    expect(await rememberedVerdict(legacy.server.mcpUrl, legacy.env).read()).toEqual({ era: "legacy" });
  });
});

describe.each([
  {
    era: "modern" as const,
    name: "2026-07-28-only",
    asked: "server/discover",
    why: "a 2025 initialize is refused there",
    live: "Live server/discover + tools/list",
  },
  {
    era: "legacy" as const,
    name: "2025-only",
    asked: "initialize",
    why: "after server/discover was not understood",
    live: "Live initialize + tools/list",
  },
])("doctor against a $name server that needs no sign-in", ({ era, asked, why, live }) => {
  let open: ReferenceServer;
  beforeAll(async () => {
    open = await startReferenceServer({
      port: 0,
      mcpEra: era,
      testOnlyUnauthenticatedMcpAccount: "personal",
    });
  });
  afterAll(async () => {
    await open?.close();
  });

  it(`the MCP endpoint check passes on ${asked} (${why})`, async () => {
    const env = {
      PATH: process.env.PATH ?? "",
      CHAT_CONFIG_DIR: join(scratchDir("cmb-doctor-open-"), "config"),
    };
    const report: DoctorReport = await doctor(open.mcpUrl, env);
    expect(checkOf(report, "endpoint")).toMatchObject({
      status: "pass",
      detail: `answers ${asked} (200) without sign-in`,
    });
    expect(checkOf(report, "live")).toMatchObject({ status: "pass", title: live });
    expect(report.ok).toBe(true);
  });
});

describe("an answer that tells nothing about the era fails the era check and is not remembered", () => {
  /** Answers the endpoint check's server/discover as a modern server would, then every later request with `later`. */
  async function scriptedServer(later: "500" | "hang up"): Promise<{ url: string; server: Server }> {
    let posts = 0;
    const server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        posts++;
        if (posts === 1) {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ jsonrpc: "2.0", id: null, result: {} }));
        } else if (later === "500") {
          response.writeHead(500, { "content-type": "application/json" });
          response.end(JSON.stringify({ message: "database down" }));
        } else {
          request.socket.destroy();
        }
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, server };
  }

  it.each(["500", "hang up"] as const)("%s", async (later) => {
    const { url, server } = await scriptedServer(later);
    try {
      const env = {
        PATH: process.env.PATH ?? "",
        CHAT_CONFIG_DIR: join(scratchDir("cmb-doctor-noera-"), "config"),
      };
      // A --header Authorization stands in for a login: the era check runs without one.
      const report = await runDoctorArgs(
        ["--token-store", "file", "--header", "Authorization: Bearer x", url],
        env,
      );
      expect(checkOf(report, "endpoint").status).toBe("pass");
      const era = checkOf(report, "era");
      expect(era.status).toBe("fail");
      expect(era.detail).toMatch(
        later === "500" ? /HTTP 500, which tells nothing about the era/ : /got no answer/,
      );
      expect(checkOf(report, "live")).toMatchObject({
        status: "skip",
        detail: "not checked (the protocol era is not known)",
      });
      expect(await rememberedVerdict(url, env).read()).toBeUndefined();
    } finally {
      await new Promise<void>((done) => server.close(() => done()));
    }
  });
});
