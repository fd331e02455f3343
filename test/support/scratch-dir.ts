/** Temp folders a test file makes, removed after its last test (the suite's leftover check lists any that stay). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

/**
 * Removes the folders made so far; test/support/private-home.ts (a setup file, run for every test file) calls it
 * after the file's own afterAll hooks, when servers and children using the folders have stopped. Not an afterAll
 * here: where test files share one module graph, this module is evaluated once for all of them.
 */
export function removeScratchDirs(): void {
  for (const dir of made.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Something another user made inside (the takeover test's attacker): the suite's leftover check names it.
    }
  }
}

/** `mkdtempSync(join(tmpdir(), prefix))`, removed after the test file. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
