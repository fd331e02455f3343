/** The relay command line read by hand gives exactly what commander gives, and leaves everything else to it. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseBridgeArgsWithCommander, parseRelayArgs } from "../../src/bridge/cli.js";

const argv = (...args: string[]) => ["node", "chat-mcp-bridge", ...args];
const quiet = () => {};
/** `${NAME}`, the reference `--header` expands (written so it reads as the literal users type). */
const envRef = (name: string) => `\${${name}}`;
const ENV = { TEAM: "acme", CHAT_MCP_CLIENT_SECRET: "shh", CHAT_MCP_URL: "https://env.example/mcp" };

/** What parsing gives: the command, or the error's class and message. */
function outcome(parse: () => unknown): unknown {
  try {
    return { command: parse() };
  } catch (error) {
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
}

function expectSameAsCommander(args: string[]): void {
  const byHand = outcome(() => parseRelayArgs(argv(...args), ENV, quiet));
  if ((byHand as { command?: unknown }).command === undefined) return; // left to commander
  expect(byHand).toEqual(outcome(() => parseBridgeArgsWithCommander(argv(...args), ENV, quiet)));
}

describe("the plain relay command line is read without commander", () => {
  it.each([
    [[]],
    [["https://chat.example.com/mcp"]],
    [["--token-store", "file", "http://127.0.0.1:8787/mcp"]],
    [["--token-store=keychain", "--debug", "--no-browser", "--allow-http", "http://chat.example.com/mcp"]],
    [["--header", `X-Team: ${envRef("TEAM")}`, "--header=X-B: 2", "https://a.example/mcp"]],
    [["--callback-port", "23456", "--auth-timeout", "1.5", "--client-id", "abc", "https://a.example/mcp"]],
    [["--client-metadata-url", "https://a.example/c.json", "https://a.example/mcp"]],
    [["https://a.example/mcp", "--debug"]],
  ])("%j gives what commander gives", (args) => {
    expect(parseRelayArgs(argv(...args), ENV, quiet)).toBeDefined();
    expectSameAsCommander(args);
  });

  it("raises the same usage errors as commander's action does", () => {
    for (const args of [
      ["ftp://a.example/mcp"],
      ["http://chat.example.com/mcp"],
      ["--header", "no colon", "https://a.example/mcp"],
      ["--client-metadata-url", "http://a.example/c.json", "https://a.example/mcp"],
      [""],
      ["--header", "--debug", "https://a.example/mcp"],
    ]) {
      expect(() => parseRelayArgs(argv(...args), ENV, quiet)).toThrow();
      expectSameAsCommander(args);
    }
  });
});

describe("everything else is left to commander", () => {
  it.each([
    [["login", "https://a.example/mcp"]],
    [["logout"]],
    [["help"]],
    [["--debug", "login"]],
    [["--help"]],
    [["-h"]],
    [["-V"]],
    [["--version"]],
    [["--bogus", "https://a.example/mcp"]],
    [["--debug=1", "https://a.example/mcp"]],
    [["--token-store", "disk", "https://a.example/mcp"]],
    [["--callback-port", "99999", "https://a.example/mcp"]],
    [["--auth-timeout", "0", "https://a.example/mcp"]],
    [["--client-secret", "x", "https://a.example/mcp"]],
    [["https://a.example/mcp", "https://b.example/mcp"]],
    [["--", "https://a.example/mcp"]],
    [["--header"]],
  ])("%j", (args) => {
    expect(parseRelayArgs(argv(...args), ENV, quiet)).toBeUndefined();
  });

  it("agrees with commander on any mix of known options, values and arguments", () => {
    const token = fc.constantFrom(
      "--header",
      "--callback-port",
      "--auth-timeout",
      "--token-store",
      "--client-id",
      "--client-metadata-url",
      "--no-browser",
      "--allow-http",
      "--debug",
      "--token-store=file",
      "--header=X-A: 1",
      "--callback-port=8080",
      "login",
      "-x",
      "",
      "file",
      "auto",
      "0",
      "80",
      "2.5",
      `X-Team: ${envRef("TEAM")}`,
      "https://a.example/mcp",
      "http://localhost:9/mcp",
      "https://a.example/c.json",
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 6 }), (args) => {
        expectSameAsCommander(args);
      }),
      { numRuns: 300 },
    );
  });
});
