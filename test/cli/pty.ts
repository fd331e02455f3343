/** The terminal tests' pseudo-terminal: python3's pty module, probed once by the files that need it (a process start). */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { needs } from "../support/requirements.js";

/** Runs a command on a pseudo-terminal (see its usage line). */
export const PTY_RUN = join(import.meta.dirname, "fixtures/pty-run.py");

/** `python3` when it can open pseudo-terminals (for PTY_RUN), else undefined: terminal tests skip. */
export const ptyPython = (() => {
  try {
    execFileSync("python3", ["-c", "import pty"], { stdio: "ignore" });
    return "python3";
  } catch {
    return undefined;
  }
})();

/** Options for a terminal test's `describe`: skipped, with the reason, where python3 cannot open a pty. */
export const needsPty = needs(
  "python3",
  ptyPython ? undefined : "python3 with its pty module is not on PATH",
);
