/** `chat-mcp-bridge doctor` on a laptop behind a company proxy and TLS root: the proxy named, and what fails when it refuses. */
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRIDGE_BIN } from "../bridge/fixtures/spawn-bridge.js";
import { scratchDir } from "../support/scratch-dir.js";
import {
  needsOpenssl,
  PROXY_PASSWORD,
  PROXY_USER,
  type ProxiedService,
  startProxiedService,
} from "./fixtures/proxied-service.js";

const browserScript = resolve(import.meta.dirname, "../auth/fixtures/http-browser.mjs");
const run = promisify(execFile);

let service: ProxiedService;
beforeAll(async () => {
  if (needsOpenssl.skip) return;
  service = await startProxiedService();
});
afterAll(() => service?.close());

interface Check {
  id: string;
  status: string;
  detail: string;
  fix?: string;
}

/** `doctor --json` as a user runs it, with `extra` in its environment; its report and exit code. */
async function doctor(
  args: string[],
  extra: Record<string, string>,
): Promise<{ code: number; ok: boolean; checks: Record<string, Check>; stdout: string }> {
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    CHAT_CONFIG_DIR: join(scratchDir("cmb-doctor-proxy-"), "config"),
    BROWSER: `${process.execPath} ${browserScript}`,
    ...extra,
  };
  const argv = [BRIDGE_BIN, "doctor", "--json", "--token-store", "file", ...args, `${service.httpsUrl}/mcp`];
  const { code, stdout } = await run(process.execPath, argv, { env }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  const report = JSON.parse(stdout) as { ok: boolean; checks: Check[] };
  return {
    code,
    ok: report.ok,
    checks: Object.fromEntries(report.checks.map((check) => [check.id, check])),
    stdout,
  };
}

describe("doctor behind a proxy", needsOpenssl, () => {
  it("through the proxy with the company root: names the proxy (never its password), signs in with --sign-in, all pass", async () => {
    const result = await doctor(["--sign-in"], {
      HTTPS_PROXY: service.proxyUrl,
      NODE_EXTRA_CA_CERTS: service.caFile,
    });
    expect(result.checks.proxy).toMatchObject({
      status: "pass",
      detail: `via ${service.proxyDisplay} (from HTTPS_PROXY)`,
    });
    expect(result.checks.tcp?.detail).toContain("the proxy 127.0.0.1");
    expect(result.checks.live).toMatchObject({ status: "pass" });
    expect(result).toMatchObject({ code: 0, ok: true });
    expect(result.stdout).not.toContain(PROXY_PASSWORD);
    expect(result.stdout).not.toContain(PROXY_USER);
  }, 60_000);

  it("a proxy that refuses the credentials: ✗ endpoint with the 407 and what to check, never the password", async () => {
    const wrong = service.proxyUrl.replace(PROXY_PASSWORD, "wrong-password");
    const result = await doctor([], { HTTPS_PROXY: wrong, NODE_EXTRA_CA_CERTS: service.caFile });
    expect(result).toMatchObject({ code: 1, ok: false });
    expect(result.checks.tcp?.status).toBe("pass");
    expect(result.checks.endpoint?.status).toBe("fail");
    expect(result.checks.endpoint?.detail).toContain("407");
    expect(result.checks.endpoint?.fix).toMatch(/user name and password in HTTPS_PROXY/);
    expect(result.stdout).not.toContain("wrong-password");
  }, 30_000);

  it("a proxy that is not running: ✗ TCP to the proxy, with the variable to check", async () => {
    const closed = await new Promise<number>((done) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => done(port));
      });
    });
    const result = await doctor([], { HTTPS_PROXY: `http://127.0.0.1:${closed}` });
    expect(result).toMatchObject({ code: 1, ok: false });
    expect(result.checks.tcp).toMatchObject({
      status: "fail",
      detail: `nothing is listening at the proxy 127.0.0.1:${closed} (from HTTPS_PROXY) (connection refused)`,
    });
    expect(result.checks.tcp?.fix).toMatch(/check the host and port in HTTPS_PROXY/);
    expect(result.checks.endpoint?.status).toBe("skip");
  }, 30_000);

  it("without the company root: ✗ endpoint naming NODE_EXTRA_CA_CERTS", async () => {
    const result = await doctor([], { HTTPS_PROXY: service.proxyUrl });
    expect(result.checks.endpoint?.status).toBe("fail");
    expect(result.checks.endpoint?.detail).toMatch(/is not trusted/);
    expect(result.checks.endpoint?.fix).toMatch(/NODE_EXTRA_CA_CERTS/);
  }, 30_000);
});

describe("doctor's TLS check", needsOpenssl, () => {
  it("a certificate from a root this machine does not know: ✗ with NODE_EXTRA_CA_CERTS as the fix", async () => {
    const port = new URL(service.httpsUrl).port;
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CHAT_CONFIG_DIR: join(scratchDir("cmb-doctor-tls-"), "config"),
    };
    const failed = await run(
      process.execPath,
      [BRIDGE_BIN, "doctor", "--json", "--token-store", "file", `https://127.0.0.1:${port}/mcp`],
      { env },
    ).catch((error: { code: number; stdout: string }) => error);
    expect(failed).toMatchObject({ code: 1 });
    const report = JSON.parse((failed as { stdout: string }).stdout) as { checks: Check[] };
    const tls = report.checks.find((check) => check.id === "tls");
    expect(tls?.status).toBe("fail");
    expect(tls?.detail).toMatch(/not trusted .*Certificate: chat\.test/);
    expect(tls?.fix).toMatch(/NODE_EXTRA_CA_CERTS/);
  }, 30_000);
});
