/** The fast argv path reads exactly what commander would hand the command, or steps aside for commander. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parsePlainArgv } from "../../src/cli/argv.js";
import { COMMANDS, type CommandSpec, type Operand } from "../../src/cli/command-table.js";
import { type GlobalOptions, globalOptionsFrom } from "../../src/cli/context.js";
import type { CliIo } from "../../src/cli/io.js";
import { buildProgram } from "../../src/cli/program.js";

const DEFAULT_BASE_URL = "http://default.test";

interface Parsed {
  command: string;
  operands: Operand[];
  options: Record<string, unknown>;
  globals: GlobalOptions;
}

const silentIo: CliIo = {
  stdout() {},
  stderr() {},
  isTTY: false,
  interactive: false,
  color: false,
  errColor: false,
  prompt: async () => "",
  spinner: () => ({ stop() {} }),
};

/** What commander hands the command for `argv`, or "usage" when it prints help, the version or an error. */
async function commanderReads(argv: string[]): Promise<Parsed | "usage"> {
  let parsed: Parsed | undefined;
  let globals: GlobalOptions | undefined;
  const recording: CommandSpec[] = COMMANDS.map((spec) => ({
    ...spec,
    async run(operands, options) {
      parsed = { command: spec.name, operands, options: { ...options }, globals: globals as GlobalOptions };
    },
  }));
  const program = buildProgram(
    "0.0.0-test",
    { writeOut() {}, writeErr() {} },
    (given) => {
      globals = given;
      return { io: silentIo, globals: given };
    },
    () => DEFAULT_BASE_URL,
    recording,
  );
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch {
    return "usage";
  }
  if (!parsed) throw new Error(`commander ran no command for ${JSON.stringify(argv)}`);
  return parsed;
}

/** What the fast path reads for `argv`, shaped like commanderReads' answer; null when it steps aside. */
function fastPathReads(argv: string[]): Parsed | null {
  const plain = parsePlainArgv(argv);
  if (!plain) return null;
  return {
    command: plain.command.name,
    operands: plain.operands,
    options: plain.options,
    globals: globalOptionsFrom(plain.globals, () => DEFAULT_BASE_URL),
  };
}

describe("plain command lines take the fast path and read as commander reads them", () => {
  const plain: string[][] = [
    ["list", "--json"],
    ["--json", "list", "--topic", "database", "--limit", "5"],
    ["list", "--all", "--no-color", "--debug"],
    ["--base-url", "http://127.0.0.1:9/", "--token", "secret", "whoami"],
    ["create", "Add", "a", "database", "--title", "Database"],
    ["get", "chat_1", "--web"],
    ["messages", "chat_1", "--limit", "100", "--all"],
    ["message", "chat_1", "msg_1"],
    ["send", "chat_1", "hello", "there"],
    ["pending", "chat_1", "--json"],
    ["resolve", "chat_1", "--integrations", "Neon, Vercel"],
    ["resolve", "chat_1", "--task", '{"type":"x"}'],
    ["preview", "chat_1", "--open"],
    ["serve", "--port", "0", "--auto-approve", "acme"],
    ["serve"],
    ["login", "--no-browser"],
    ["logout"],
    ["list", "--topic", "-5"],
    ["send", "chat_1", "-"],
    ["list", "--token", "--json"],
  ];
  for (const argv of plain) {
    it(`chat-cli ${argv.join(" ")}`, async () => {
      const fast = fastPathReads(argv);
      expect(fast).not.toBeNull();
      expect(fast).toEqual(await commanderReads(argv));
    });
  }
});

describe("help, version, usage errors and unusual forms are left to commander", () => {
  const unusual: string[][] = [
    [],
    ["-h"],
    ["list", "--help"],
    ["-V"],
    ["list", "-V"],
    ["help", "list"],
    ["lst"],
    ["list", "--bogus"],
    ["list", "--limit", "0"],
    ["list", "--limit"],
    ["list", "--limit=5"],
    ["list", "extra"],
    ["get"],
    ["create", "--title", "T"],
    ["--base-url", "ftp://example.test", "list"],
    ["--base-url=http://x.test", "list"],
    ["list", "--", "--json"],
    ["resolve", "chat_1", "--integrations", ","],
    ["serve", "--port", "70000"],
    ["--topic", "x", "list"],
    ["list", "--topic", "-Vx"],
    ["list", "--topic", "-h"],
    ["create", "x", "--title", "--json"],
  ];
  for (const argv of unusual) {
    it(`chat-cli ${argv.join(" ") || "(nothing)"}`, () => {
      expect(fastPathReads(argv)).toBeNull();
    });
  }
});

describe("any command line: the fast path agrees with commander or steps aside", () => {
  const word = fc.constantFrom(
    ...COMMANDS.map((spec) => spec.name),
    ...["--json", "--debug", "--no-color", "--token", "--base-url", "http://h.test/", "ftp://h.test"],
    ...["--topic", "--limit", "--all", "--title", "--web", "--open", "--integrations", "--connected"],
    ...["--reject", "--approve", "--task", "--port", "--host", "--auto-approve", "--data", "--no-browser"],
    ...["-h", "--help", "-V", "--version", "-Vx", "-hx", "--", "-", "-5", "--limit=5", "--token=t", "-x"],
    ...["5", "0", "101", "a,b", ",", "chat_1", "hello", "help", ""],
  );
  it("for generated argv", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(word, { maxLength: 2 }),
        fc.constantFrom(...COMMANDS.map((spec) => spec.name)),
        fc.array(word, { maxLength: 5 }),
        async (before, name, after) => {
          const argv = [...before, name, ...after];
          const fast = fastPathReads(argv);
          if (fast === null) return;
          expect(fast).toEqual(await commanderReads(argv));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
