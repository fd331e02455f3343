/** Issue 40, chat-cli in-process: what it says when a server cannot be reached, after a wrong name, at SSO, and in its help (Ctrl-C and sign-in: browser.test.ts; a busy port: process.test.ts). */
import type { networkInterfaces } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { everyInterfaceNote } from "../../src/cli/commands/serve.js";
import { reportError } from "../../src/cli/run.js";
import { ChatConnectionError } from "../../src/client/errors.js";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { type CliResult, cleanEnv, recordingIo, refusingFetch, runInProcess } from "./helpers.js";

const server = createRequestableReferenceServer();
afterAll(() => server.close());

/** chat-cli where nothing answers at `url`: every request fails as a refused connection does. */
const unreachable = (args: string[]) => runInProcess(cleanEnv(), { fetch: refusingFetch })(args);
const UNREACHABLE_URL = "http://127.0.0.1:9";

function expectCannotReach(result: CliResult, url: string): void {
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines[0]).toMatch(new RegExp(`^error: cannot reach ${url.replace(/[.:/]/g, "\\$&")}`));
  // One hint, said once.
  expect(lines).toHaveLength(2);
  expect(result.stderr.match(/chat-cli serve/g) ?? []).toHaveLength(1);
}

describe("a server that cannot be reached: one judgement, exit 1, one hint", () => {
  it("with a key set", async () => {
    const result = await unreachable(["--base-url", UNREACHABLE_URL, "--token", "chat_sk_x", "list"]);
    expectCannotReach(result, UNREACHABLE_URL);
  });

  it("with no key set: cannot reach, not 'not signed in'", async () => {
    const result = await unreachable(["--base-url", UNREACHABLE_URL, "list"]);
    expectCannotReach(result, UNREACHABLE_URL);
  });

  it("login", async () => {
    // The sign-in's requests go through the run's fetch too (no connection is dialled from this test).
    const asked: string[] = [];
    const fetch = (input: string | URL | Request) => {
      asked.push(input instanceof Request ? input.url : String(input));
      return refusingFetch(input);
    };
    const result = await runInProcess(cleanEnv(), { fetch })([
      ...["--base-url", UNREACHABLE_URL, "login", "--no-browser"],
    ]);
    expectCannotReach(result, UNREACHABLE_URL);
    expect(asked.length).toBeGreaterThan(0);
  });

  it("a host name that does not resolve says so, and does not suggest chat-cli serve", async () => {
    const lookup = Object.assign(new Error("getaddrinfo ENOTFOUND nosuchhost.invalid"), {
      code: "ENOTFOUND",
    });
    const error = new ChatConnectionError("GET /v2/chats could not reach http://nosuchhost.invalid", {
      cause: new TypeError("fetch failed", { cause: lookup }),
    });
    const io = recordingIo();
    const code = await reportError(error, io, { debug: false, baseUrl: "http://nosuchhost.invalid" });
    expect(code).toBe(1);
    expect(io.err).toMatch(
      /^error: cannot reach http:\/\/nosuchhost\.invalid: .*nosuchhost\.invalid.*ENOTFOUND/,
    );
    expect(io.err).toMatch(/host name/);
    expect(io.err).not.toMatch(/chat-cli serve/);
    expect(io.err.trimEnd().split("\n")).toHaveLength(2);
  });
});

describe("resolve --integrations with the wrong case", () => {
  it("suggests the requested name", async () => {
    const env = cleanEnv({ CHAT_API_URL: server.url, CHAT_API_KEY: server.apiKeys.acme as string });
    const cli = runInProcess(env, { fetch: server.fetch });
    const created = await cli(["create", "database please", "--json"]);
    const chatId = (JSON.parse(created.stdout) as { id: string }).id;
    const result = await cli(["resolve", chatId, "--integrations", "neon"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Did you mean Neon\?/);
  });
});

describe("sso_required", () => {
  it("says to open this link, and prints it", async () => {
    const result = await runInProcess(cleanEnv(), { fetch: server.fetch })([
      "--base-url",
      server.url,
      "--token",
      server.apiKeys["secure-corp"] as string,
      "list",
    ]);
    expect(result.code).toBe(4);
    expect(result.stderr).not.toMatch(/reauthUrl/);
    expect(result.stderr).toMatch(/[Oo]pen this link[^\n]*\n?[^\n]*https?:\/\/127\.0\.0\.1:\d+\/sso\//);
  });
});

describe("subcommand help", () => {
  const cli = runInProcess(cleanEnv());

  it("list --help shows --json", async () => {
    const result = await cli(["list", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/--json/);
  });

  it("send --help describes chatId", async () => {
    const result = await cli(["send", "--help"]);
    expect(result.stdout).toMatch(/^ {2}chatId +\S/m);
  });
});

describe("serve --host 0.0.0.0", () => {
  const interfaces = {
    lo: [{ address: "127.0.0.1", family: "IPv4", internal: true }],
    eth0: [
      { address: "fe80::1", family: "IPv6", internal: false },
      { address: "192.168.1.5", family: "IPv4", internal: false },
    ],
  } as unknown as ReturnType<typeof networkInterfaces>;

  it("warns that every interface listens, and prints a URL other machines can reach", () => {
    const lines = everyInterfaceNote("0.0.0.0", 8787, interfaces).join("\n");
    expect(lines).toMatch(/every network interface/);
    expect(lines).toContain("http://192.168.1.5:8787");
  });

  it("says nothing for a loopback host", () => {
    expect(everyInterfaceNote("127.0.0.1", 8787, interfaces)).toEqual([]);
  });
});
