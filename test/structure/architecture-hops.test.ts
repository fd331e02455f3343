/** ARCHITECTURE.md's hop table is what scripts/hops.mjs measures of the code now (V8 coverage of one warm tools/call per era pair). */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

describe("ARCHITECTURE.md's hop table", () => {
  it("matches `npm run hops` (run `npm run hops -- --write` after a change that moves a call's path)", () => {
    const run = spawnSync(process.execPath, [join(root, "scripts", "hops.mjs"), "--check"], {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(run.stderr).not.toContain("differs");
    expect(run.status, `${run.stderr}\n${run.stdout}`).toBe(0);
  }, 150_000);
});
