/** The official MCP conformance suite's authorization-server scenarios against the reference authorization server (Node 22+ binary). */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import { startTestServer } from "./helpers.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const CONFORMANCE_CLI = join(repoRoot, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

/** Every authorization-server scenario of 0.2.0-alpha.12; all must pass. */
const SCENARIOS = ["authorization-server-metadata-endpoint", "authorization-code-grant"];
const CLIENT_ID = "conformance-suite";

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

/** A loopback port free right now (the suite's callback server listens on it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

/** Every `checks.json` the run wrote, by scenario directory. */
function checksIn(dir: string): Check[] {
  const found: Check[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...checksIn(path));
    else if (name === "checks.json") found.push(...(JSON.parse(readFileSync(path, "utf8")) as Check[]));
  }
  return found;
}

/**
 * Runs the suite's `authorization` command. The code-grant scenario prints an authorization URL for a person to
 * open: the test opens it as a browser would (the server auto-approves) and follows the redirect to the suite's
 * callback server.
 */
function runSuite(
  issuer: string,
  port: number,
  outputDir: string,
): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        CONFORMANCE_CLI,
        "authorization",
        "--url",
        issuer,
        "--client-id",
        CLIENT_ID,
        "--port",
        String(port),
        "--output-dir",
        outputDir,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    let output = "";
    let opened = false;
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      output += chunk;
    });
    child.stdout.on("data", (chunk: string) => {
      output += chunk;
      const url = /^(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(output)?.[1];
      if (url && !opened) {
        opened = true;
        void openLikeABrowser(url).catch((error: Error) => {
          output += `\n[test] opening the authorization URL failed: ${error.message}`;
        });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(killer);
      resolve({ exitCode: code ?? 1, output });
    });
  });
}

async function openLikeABrowser(url: string): Promise<void> {
  let next = url;
  for (let hop = 0; hop < 5; hop++) {
    const response = await fetch(next, { redirect: "manual" });
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (!location) return;
    next = new URL(location, next).href;
  }
}

describe("official MCP conformance suite, authorization-server scenarios, against the reference authorization server", () => {
  let server: ReferenceServer;
  let outputDir: string;
  let run: { exitCode: number; output: string };
  let checks: Check[];

  beforeAll(async () => {
    const port = await freePort();
    server = await startTestServer({
      autoApprove: "personal",
      oauthClients: [{ client_id: CLIENT_ID, redirect_uris: [`http://127.0.0.1:${port}/callback`] }],
    });
    outputDir = mkdtempSync(join(tmpdir(), "as-conformance-"));
    run = await runSuite(server.url, port, outputDir);
    checks = checksIn(outputDir);
  }, 90_000);

  afterAll(async () => {
    await server?.close();
    if (outputDir) rmSync(outputDir, { recursive: true, force: true });
  });

  it("runs every scenario and exits 0", () => {
    expect(run.exitCode, run.output).toBe(0);
    for (const scenario of SCENARIOS) expect(run.output).toContain(scenario);
  });

  it("every check succeeds (none failed, none skipped)", () => {
    // 0.2.0-alpha.12 writes these three; a newer suite may add more, which must pass too.
    expect(checks.map((check) => check.id)).toEqual(
      expect.arrayContaining([
        "authorization-server-metadata",
        "authorization-server-metadata-cimd",
        "authorization-code-grant",
      ]),
    );
    const notPassed = checks.filter((check) => check.status !== "SUCCESS" && check.status !== "INFO");
    expect(notPassed, JSON.stringify(notPassed, null, 2)).toEqual([]);
  });
});
