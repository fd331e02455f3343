/** The bash completion script is valid bash (`bash -n`), and completes words the way the table says. */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
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
