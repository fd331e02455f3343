/** `chat-cli login --with-token`: the key read from stdin, stored as the login, and used by the next command. */
import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useRequestableReferenceServer } from "../support/reference-request.js";
import { cleanEnv, inProcessCli, jsonOf, recordingIo } from "./helpers.js";

async function* stdinOf(...chunks: string[]): AsyncIterable<string> {
  yield* chunks;
}

describe("login --with-token", () => {
  const reference = useRequestableReferenceServer();

  it("stores the key from stdin (one trailing newline dropped); whoami then uses it", async () => {
    const { server } = reference;
    const key = server.apiKeys.acme as string;
    const env = cleanEnv();
    const login = await inProcessCli(server, env, { stdin: stdinOf(key.slice(0, 5), `${key.slice(5)}\n`) })([
      "login",
      "--with-token",
      "--token-store",
      "file",
    ]);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toBe("");
    expect(login.stderr).toMatch(/stored for .* in the file \(.*\.json\)/);
    expect(login.stdout + login.stderr).not.toContain(key);
    const file = /\((\/[^)]*\.json)\)/.exec(login.stderr)?.[1] as string;
    expect(file.startsWith(join(env.CHAT_CONFIG_DIR as string, "auth"))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const who = await inProcessCli(server, env)(["whoami", "--json"]);
    expect(who.code, who.stderr).toBe(0);
    expect(jsonOf(who)).toMatchObject({ tokenSource: "file", token: `${key.slice(0, 4)}…${key.slice(-4)}` });
    // On a terminal the values start in one column; piped, each line is `label:<TAB>value`.
    const onTerminal = await inProcessCli(server, env)(["whoami"], recordingIo({ isTTY: true }));
    const lines = onTerminal.stdout.trimEnd().split("\n");
    expect(lines.map((line) => line.split(" ")[0])).toEqual(["account:", "server:", "token:", "source:"]);
    expect(new Set(lines.map((line) => /^\w+:\s+/.exec(line)?.[0].length)).size).toBe(1);
    expect(onTerminal.stdout).not.toContain("\t");
    expect((await inProcessCli(server, env)(["whoami"])).stdout).toMatch(/^token:\t/m);
    const list = await inProcessCli(server, env)(["list", "--json"]);
    expect(list.code, list.stderr).toBe(0);

    const logout = await inProcessCli(server, env)(["logout"]);
    expect(logout.code, logout.stderr).toBe(0);
    expect((await inProcessCli(server, env)(["whoami"])).code).toBe(4);
  });

  it.each([
    ["empty stdin", [] as string[], /nothing on stdin/],
    ["a newline alone", ["\n"], /nothing on stdin/],
    ["two lines", ["key-one\nkey-two\n"], /the key alone, on one line/],
  ])("%s is a usage error", async (_name, chunks, message) => {
    const { server } = reference;
    const result = await inProcessCli(server, cleanEnv(), { stdin: stdinOf(...chunks) })([
      "login",
      "--with-token",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it("does not go with a sign-in flag", async () => {
    const { server } = reference;
    const result = await inProcessCli(server, cleanEnv(), { stdin: stdinOf("k\n") })([
      "login",
      "--with-token",
      "--device-code",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--with-token .* drop --device-code/);
  });
});
