/** chat-mcp-bridge run by hand: a mistyped subcommand gets a suggestion, and on a terminal the relay says what it waits for. */
import { describe, expect, it } from "vitest";
import { parseBridgeArgs, relayTerminalHint } from "../../src/bridge/command/arguments.js";
import { UsageError } from "../../src/internal/usage-error.js";

const parse = (...args: string[]) => parseBridgeArgs(["node", "chat-mcp-bridge", ...args], {}, () => {});

describe("subcommand typos", () => {
  it.each([
    [["doctr"], "doctor"],
    [["logut", "https://example.com/mcp"], "logout"],
    [["--debug", "lgoin"], "login"],
  ])("%j suggests %s instead of 'too many arguments' or 'not a URL'", (args, suggestion) => {
    let error: unknown;
    try {
      parse(...args);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(
      new RegExp(`unknown command "\\w+"; did you mean "${suggestion}"\\?`),
    );
  });

  it("a URL, a real subcommand and an option's value are not typos", () => {
    expect(parse("https://example.com/mcp").kind).toBe("relay");
    expect(parse("doctor", "https://example.com/mcp").kind).toBe("doctor");
    expect(parse("--profile", "doctr", "https://example.com/mcp").kind).toBe("relay");
  });

  it("a subcommand after any option that takes no value is that subcommand (commander alone reads argv)", () => {
    for (const flag of ["--no-browser", "--allow-http", "--debug", "--read-only", "--silent"])
      expect(parse(flag, "login", "https://example.com/mcp").kind).toBe("login");
    expect(parse("doctor", "--json", "--sign-in", "https://example.com/mcp").kind).toBe("doctor");
  });

  it("a second operand after the URL is a usage error, as commander words it", () => {
    const errors: string[] = [];
    expect(() =>
      parseBridgeArgs(["node", "chat-mcp-bridge", "https://example.com/mcp", "extra"], {}, (text) =>
        errors.push(text),
      ),
    ).toThrow(expect.objectContaining({ code: "commander.excessArguments", exitCode: 1 }));
    expect(errors.join("")).toContain("too many arguments. Expected 1 argument but got 2.");
    expect(() => parse("login", "https://example.com/mcp", "extra")).toThrow(
      /too many arguments for 'login'/,
    );
  });
});

describe("the relay on a terminal", () => {
  it("one line: it waits for an MCP client on stdin, and how to try it with doctor", () => {
    const hint = relayTerminalHint({ stdinIsTTY: true, silent: false, url: "https://example.com/mcp" });
    expect(hint).toMatch(/^chat-mcp-bridge: waiting for an MCP client on stdin/);
    expect(hint).toContain("chat-mcp-bridge doctor https://example.com/mcp");
    expect(hint?.trimEnd().split("\n")).toHaveLength(1);
  });

  it("nothing when an MCP client runs it (stdin not a terminal) or with --silent", () => {
    expect(
      relayTerminalHint({ stdinIsTTY: false, silent: false, url: "https://x.example/mcp" }),
    ).toBeUndefined();
    expect(
      relayTerminalHint({ stdinIsTTY: true, silent: true, url: "https://x.example/mcp" }),
    ).toBeUndefined();
  });
});
