/** `chat-cli completion <shell>`: each script names every command and every flag of `resolve`, read from the program itself. */
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { runInProcess } from "./helpers.js";

/** The commands and resolve's long flags as the program declares them (resolve's module loaded, as when it runs). */
async function fromProgram(): Promise<{ commands: string[]; resolveFlags: string[] }> {
  const quiet = { writeOut: () => {}, writeErr: () => {} };
  const { program, declareNamed } = buildProgram(
    "0",
    quiet,
    () => ({}) as never,
    () => "",
  );
  await declareNamed("resolve");
  const resolve = program.commands.find((command) => command.name() === "resolve");
  return {
    commands: program.commands.map((command) => command.name()),
    resolveFlags: (resolve?.options ?? []).flatMap((option) => (option.long ? [option.long] : [])),
  };
}

describe("chat-cli completion", () => {
  it.each(["bash", "zsh", "fish"])("%s: names every command and every option of resolve", async (shell) => {
    const { commands, resolveFlags } = await fromProgram();
    expect(commands).toContain("resolve");
    expect(resolveFlags).toContain("--approve");
    const { code, stdout, stderr } = await runInProcess()(["completion", shell]);
    expect(code, stderr).toBe(0);
    for (const name of commands) expect(stdout).toMatch(new RegExp(`\\b${name}\\b`));
    // fish names a flag without its dashes (`-l approve`).
    const spelled = (flag: string) => (shell === "fish" ? `-l ${flag.slice(2)}` : flag);
    const resolveLines = stdout
      .split("\n")
      .filter((line) => /\bresolve\)|from resolve'/.test(line))
      .join("\n");
    for (const flag of resolveFlags) expect(resolveLines).toContain(spelled(flag));
    expect(stdout).toContain(spelled("--base-url"));
  });

  it("an unknown shell is a usage error naming the three", async () => {
    const { code, stdout, stderr } = await runInProcess()(["completion", "ksh"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/bash, zsh and fish/);
  });
});
