/** The completion scripts parse in their shells (`-n`; zsh and fish are system packages of the suite's), and bash completes words the way the table says. */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { needs } from "../support/requirements.js";
import { scratchDir } from "../support/scratch-dir.js";
import { runInProcess } from "./helpers.js";

function bash(script: string, args: string[] = []) {
  return spawnSync("bash", args, { input: script, encoding: "utf8" });
}

describe("chat-cli completion bash in bash", () => {
  it("parses (bash -n) and completes commands and resolve's flags", async () => {
    const { stdout } = await runInProcess()(["completion", "bash"]);
    const parsed = bash(stdout, ["-n"]);
    expect(parsed.status, parsed.stderr).toBe(0);

    const complete = (words: string[]) => {
      const line = words.map((word) => `'${word}'`).join(" ");
      const result = bash(
        `${stdout}\nCOMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _chat_cli; printf '%s\\n' "\${COMPREPLY[@]}"\n`,
      );
      expect(result.status, result.stderr).toBe(0);
      return result.stdout.trim().split("\n");
    };
    expect(complete(["chat-cli", "res"])).toEqual(["resolve"]);
    expect(complete(["chat-cli", "--base-url", "http://x", "resolve", "--app"])).toEqual(["--approve"]);
    expect(complete(["chat-cli", "completion", "z"])).toEqual(["zsh"]);
  });
});

const missing = (shell: string) =>
  spawnSync(shell, ["-c", "true"]).status === 0
    ? undefined
    : `${shell} is not installed (scripts/install-system-deps.sh installs it)`;
for (const shell of ["zsh", "fish"]) {
  describe(`chat-cli completion ${shell} in ${shell}`, needs(shell, missing(shell)), () => {
    it(`${shell} -n parses its script`, async () => {
      const { stdout } = await runInProcess()(["completion", shell]);
      const file = join(scratchDir("chat-cli-completion-"), `chat-cli.${shell}`);
      writeFileSync(file, stdout);
      const parsed = spawnSync(shell, ["-n", file], { encoding: "utf8" });
      expect(parsed.status, parsed.stderr).toBe(0);
    });
  });
}
