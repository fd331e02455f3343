/** Exit codes and error messages of chat-cli, in-process on the reference server's handler: usage 2, error 1, conflict 3 (see flow), authentication 4. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { type CliResult, cleanEnv, ROOT, refusingFetch, runInProcess } from "./helpers.js";

const server = createRequestableReferenceServer();
afterAll(() => server.close());
const env = cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: server.apiKeys.acme! });
const run = runInProcess(env, { fetch: server.fetch });
const cli = (...args: string[]): Promise<CliResult> => run(args);

function expectOneLine(result: CliResult, code: number, pattern: RegExp): void {
  expect(result.code).toBe(code);
  expect(result.stdout).toBe("");
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines[0]).toMatch(pattern);
  expect(lines.length).toBeLessThanOrEqual(2);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe("-V / -h", () => {
  it("-V prints the package version, exit 0", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const { code, stdout, stderr } = await cli("-V");
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("-h lists every command, exit 0", async () => {
    const result = await cli("-h");
    expect(result.code).toBe(0);
    for (const name of [
      "login",
      "logout",
      "whoami",
      "create",
      "list",
      "get",
      "messages",
      "message",
      "send",
    ]) {
      expect(result.stdout).toContain(`  ${name}`);
    }
    for (const name of ["pending", "resolve", "preview", "serve"])
      expect(result.stdout).toContain(`  ${name}`);
  });
});

describe("exit 2: usage", () => {
  it("an unknown command, with commander's suggestion on the same line", async () => {
    expectOneLine(await cli("lst"), 2, /^error: unknown command 'lst' \(Did you mean list\?\)$/);
  });

  it("an unknown flag, with a suggestion", async () => {
    expectOneLine(
      await cli("list", "--limt", "3"),
      2,
      /^error: unknown option '--limt' \(Did you mean --limit\?\)$/,
    );
  });

  it("a bad flag value", async () => {
    expectOneLine(
      await cli("list", "--limit", "0"),
      2,
      /^error: option '--limit <n>' argument '0' is invalid/,
    );
    expectOneLine(await cli("--base-url", "ftp://x", "list"), 2, /must be an http\(s\) URL/);
  });

  it("a missing argument", async () => {
    expectOneLine(await cli("get"), 2, /^error: missing required argument 'chatId'$/);
  });

  it("no command at all shows the help on stderr", async () => {
    const result = await cli();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Usage: chat-cli");
  });
});

describe("exit 1: error", () => {
  it("a missing chat names it, one line, no stack", async () => {
    expectOneLine(await cli("get", "chat_missing"), 1, /^error: chat chat_missing not found/);
  });

  it("--debug adds details and the stack trace on stderr", async () => {
    const result = await cli("get", "chat_missing", "--debug");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\n\s+at /);
    expect(result.stderr).toContain('"status":404');
  });

  it("a server that cannot be reached", async () => {
    const port = 9;
    const result = await runInProcess(env, { fetch: refusingFetch })([
      "--base-url",
      `http://127.0.0.1:${port}`,
      "list",
    ]);
    expectOneLine(result, 1, /^error: cannot reach http:\/\/127\.0\.0\.1:\d+/);
  });
});

describe("exit 4: authentication needed", () => {
  it("no token anywhere says to run chat-cli login or set CHAT_API_KEY", async () => {
    const result = await runInProcess(cleanEnv(), { fetch: server.fetch })([
      "--base-url",
      server.url,
      "list",
    ]);
    expectOneLine(result, 4, /^error: not signed in/);
    expect(result.stderr).toMatch(/chat-cli login.*CHAT_API_KEY/);
  });

  it("a rejected token (401)", async () => {
    const result = await cli("--token", "chat_sk_wrong", "list");
    expectOneLine(result, 4, /^error: authentication needed/);
    expect(result.stderr).toMatch(/chat-cli login.*CHAT_API_KEY/);
    expect(result.stderr).not.toContain("chat_sk_wrong");
  });

  it("--token wins over CHAT_API_KEY", async () => {
    const result = await cli("--token", "chat_sk_wrong", "list");
    expect(result.code).toBe(4);
    expect((await cli("list")).code).toBe(0);
  });

  it("sso_required prints the re-authentication link", async () => {
    const result = await cli("--token", server.apiKeys["secure-corp"]!, "list");
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/single sign-on/);
    expect(result.stderr).toMatch(
      /Open this link in a browser, complete single sign-on at 127\.0\.0\.1:\d+, then retry: https?:\/\//,
    );
  });
});

describe("colour", () => {
  it("off a TTY nothing is coloured, errors included", async () => {
    const result = await cli("get", "chat_missing");
    expect(result.stderr).not.toContain("\u001b[");
  });
});
