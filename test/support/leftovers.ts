/**
 * The suite's temp folder and its leftover check: every run gets a private TMPDIR (children inherit it), and at the
 * end whatever a test left there is listed, then removed; CHAT_TEST_STRICT=1 fails the run when anything was left.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Creates the run's temp folder under the system one and points TMPDIR (and TEMP, TMP) at it. */
export function usePrivateTempDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = mkdtempSync(join(tmpdir(), "cmb-suite-"));
  // As /tmp itself: tests hand folders to other users (the takeover test's attacker) and make their own 0700 ones.
  chmodSync(dir, 0o1777);
  env.TMPDIR = dir;
  env.TEMP = dir;
  env.TMP = dir;
  return dir;
}

/**
 * Node's own compile cache, not a test's: chat-cli calls `module.enableCompileCache()`, whose default folder on
 * Node >= 22.1 is `<tmpdir>/node-compile-cache`, shared by every process of the run.
 */
const NODE_OWN = new Set(["node-compile-cache"]);

/** What tests left in `dir`, by name, sorted. */
export function leftoversIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => !NODE_OWN.has(name))
      .sort();
  } catch {
    return [];
  }
}

const SHOWN = 20;

/**
 * Lists what is left in `dir` (on `write`), removes the folder, and returns false when `strict` and something was
 * left (the caller fails the run: vitest ignores a throw in a global teardown). The check runs after every test
 * file's own cleanup, so anything here is a test that did not clean up.
 */
export function checkLeftovers(
  dir: string,
  { strict, write }: { strict: boolean; write: (text: string) => void },
) {
  const left = leftoversIn(dir);
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  if (left.length === 0) {
    write("Leftovers in the temp folder: none\n");
    return true;
  }
  const names =
    left.slice(0, SHOWN).join(", ") + (left.length > SHOWN ? `, … (${left.length - SHOWN} more)` : "");
  write(`Leftovers in the temp folder: ${left.length} (removed now; a test did not clean up): ${names}\n`);
  if (!strict) return true;
  write(`CHAT_TEST_STRICT=1: failing the run, ${left.length} temp folder entries were left by tests\n`);
  return false;
}
