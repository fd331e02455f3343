/** chat-cli's commander program: help lists every command, and usage errors read as commander words them. */
import { Command, Help } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS, declare } from "../../src/cli/program.js";
import { run } from "../../src/cli/run.js";
import { recordingIo } from "./helpers.js";

describe("the program", () => {
  it("lists every command in the program's help", async () => {
    const io = recordingIo();
    expect(await run(["--help"], io)).toBe(0);
    for (const spec of COMMANDS) expect(io.out).toMatch(new RegExp(`\\n\\s+${spec.name}\\b`));
  });

  it("suggests the command meant for a typo, and refuses an unknown option of the named one", async () => {
    const typo = recordingIo();
    expect(await run(["lst"], typo)).toBe(2);
    expect(typo.err).toContain("(Did you mean list?)");
    const unknown = recordingIo();
    expect(await run(["list", "--bogus"], unknown)).toBe(2);
    expect(unknown.err).toContain("unknown option '--bogus'");
  });
});

describe("each command declares its own flags (commands/*.ts), loaded only when it runs", () => {
  it.each(COMMANDS.map((entry) => [entry.name, entry] as const))(
    "%s: the usage the program's help lists is the one its definition makes",
    async (name, entry) => {
      const command = new Command(name);
      declare(command, await entry.load(), () => {
        throw new Error("not run");
      });
      expect(new Help().subcommandTerm(command)).toBe(entry.usage ? `${name} ${entry.usage}` : name);
    },
  );

  it("a command's flags reach its run under the definition's keys (--auth-timeout in ms, --no-browser)", async () => {
    const io = recordingIo();
    // A base URL ending in /v2 is refused before any sign-in starts: exit 2 proves the flags were parsed first.
    expect(
      await run(["--base-url", "http://127.0.0.1:9/v2", "login", "--no-browser", "--auth-timeout", "0"], io),
    ).toBe(2);
    expect(io.err).toContain("--auth-timeout");
  });
});

describe("help for a command", () => {
  it("`help resolve` and `resolve --help` both list resolve's flags and argument", async () => {
    const viaHelp = recordingIo();
    expect(await run(["help", "resolve"], viaHelp)).toBe(0);
    const viaFlag = recordingIo();
    expect(await run(["resolve", "--help"], viaFlag)).toBe(0);
    expect(viaHelp.out).toContain("Usage: chat-cli resolve [options] <chatId>");
    expect(viaHelp.out).toContain("--approve");
    expect(viaHelp.out).toBe(viaFlag.out);
  });

  it("`help` alone prints the program's help and exits 0, as -h does (it exited 2)", async () => {
    const io = recordingIo();
    expect(await run(["help"], io)).toBe(0);
    expect(io.out).toContain("Usage: chat-cli [options] [command]");
    const bare = recordingIo();
    expect(await run([], bare)).toBe(2);
  });
});
