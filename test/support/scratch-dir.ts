/** Temp folders a test file makes, removed after its last test (the suite's leftover check lists any that stay). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const made: string[] = [];
// Registered when a test file imports this module (each file gets its own copy), so it runs after that file's
// own afterAll hooks: servers and children using the folders have stopped by then.
afterAll(() => {
  for (const dir of made.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Something another user made inside (the takeover test's attacker): the suite's leftover check names it.
    }
  }
});

/** `mkdtempSync(join(tmpdir(), prefix))`, removed after the test file. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
