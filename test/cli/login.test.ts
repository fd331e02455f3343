/** login's refusals before any sign-in starts, and whoami for a --token or CHAT_API_KEY, in-process (signing in through a browser and the loopback listener: browser.test.ts). */
import { afterAll, describe, expect, it } from "vitest";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { cleanEnv, jsonOf, runInProcess } from "./helpers.js";

const server = createRequestableReferenceServer({ autoApprove: "acme" });
afterAll(() => server.close());

describe("login flags refused before a sign-in starts", () => {
  it("--auth-timeout that is not a number of seconds: its message names what it needs", async () => {
    const bad = await runInProcess(cleanEnv(), { fetch: server.fetch })([
      ...["--base-url", server.url, "login", "--auth-timeout", "soon"],
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/positive number of seconds/);
  });

  it("--auth-timeout over a day (a timer past 24.8 days fires at once): refused with its range", async () => {
    const bad = await runInProcess(cleanEnv(), { fetch: server.fetch })([
      ...["--base-url", server.url, "login", "--auth-timeout", "2147484"],
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--auth-timeout.*86400/);
  });

  it("refuses a callback path that is not absolute, with exit 2", async () => {
    const login = await runInProcess(cleanEnv(), { fetch: server.fetch })([
      ...["--base-url", server.url, "login", "--callback-path", "oauth"],
    ]);
    expect(login.code).toBe(2);
    expect(login.stderr).toMatch(/--callback-path.*start with/);
  });
});

describe("whoami with a key", () => {
  it("whoami names the source of a --token or CHAT_API_KEY, masked", async () => {
    const key = server.apiKeys.acme!;
    const cli = runInProcess(cleanEnv({ CHAT_API_KEY: key }), { fetch: server.fetch });
    const fromEnv = await cli(["--base-url", server.url, "whoami"]);
    expect(fromEnv.stdout).toContain("source:\tCHAT_API_KEY environment variable\n");
    expect(fromEnv.stdout).toContain(`token:\t${key.slice(0, 4)}…${key.slice(-4)}\n`);
    expect(fromEnv.stdout).not.toContain(key);
    const fromFlag = await cli(["--base-url", server.url, "--token", key, "whoami", "--json"]);
    expect(jsonOf(fromFlag)).toMatchObject({ tokenSource: "flag" });
  });
});

describe("chat-cli's time flags are bounded like the bridge's", () => {
  it("serve --assistant-delay over a day is refused with its range", async () => {
    const serve = await runInProcess(cleanEnv(), { fetch: server.fetch })([
      "serve",
      "--assistant-delay",
      "2147483648",
    ]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/--assistant-delay.*86400000/);
  });
});
