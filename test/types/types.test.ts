/** The published declarations as users' code meets them: tsc over the user-style files in user/ (ESM and CommonJS). */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("types a user's code compiles against", () => {
  it("narrow on type, catch typos, agree with the schemas, and resolve for import and require", async () => {
    for (const built of ["dist/index.d.ts", "dist/index.d.cts"])
      if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` first`);
    const tsc = resolve("node_modules/typescript/bin/tsc");
    const result = await run(process.execPath, [tsc, "-p", "test/types/user/tsconfig.json"]).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(result).toBe("");
  }, 120_000);
});
