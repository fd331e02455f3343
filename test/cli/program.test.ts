/** chat-cli's commander program: help lists every command, and usage errors read as commander words them. */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/command-table.js";
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
