/** chat-cli's commander program: which commands it builds for an argv, and that help and errors read the same. */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/command-table.js";
import { commandsToBuild } from "../../src/cli/program.js";
import { run } from "../../src/cli/run.js";
import { recordingIo } from "./helpers.js";

const names = (argv: string[]) => commandsToBuild(argv).map((spec) => spec.name);

describe("commandsToBuild", () => {
  it("builds only the command argv names, after global options and their values", () => {
    expect(names(["list", "--json"])).toEqual(["list"]);
    expect(names(["--token", "list", "get", "chat_1"])).toEqual(["get"]);
    expect(names(["--base-url", "http://127.0.0.1:9", "--json", "pending", "c"])).toEqual(["pending"]);
    expect(names(["--base-url=http://127.0.0.1:9", "send", "c", "hi"])).toEqual(["send"]);
  });

  it("builds every command for help, no command, an unknown one or one after --", () => {
    const all = COMMANDS.map((spec) => spec.name);
    expect(names(["--help"])).toEqual(all);
    expect(names(["list", "-h"])).toEqual(all);
    expect(names([])).toEqual(all);
    expect(names(["lst"])).toEqual(all);
    expect(names(["help", "list"])).toEqual(all);
    expect(names(["--", "list"])).toEqual(all);
  });
});

describe("the program built for one command", () => {
  it("still lists every command in the program's help", async () => {
    const io = recordingIo();
    expect(await run(["--help"], io)).toBe(0);
    for (const spec of COMMANDS) expect(io.out).toMatch(new RegExp(`\\n\\s+${spec.name}\\b`));
  });

  it("still suggests the command meant for a typo, and refuses an unknown option of the named one", async () => {
    const typo = recordingIo();
    expect(await run(["lst"], typo)).toBe(2);
    expect(typo.err).toContain("(Did you mean list?)");
    const unknown = recordingIo();
    expect(await run(["list", "--bogus"], unknown)).toBe(2);
    expect(unknown.err).toContain("unknown option '--bogus'");
  });
});
