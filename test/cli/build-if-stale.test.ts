/** `npm run demo` rebuilds only when an input of the build changed (scripts/build-if-stale.mjs). */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ESM script without types
import { buildIsCurrent, OUTPUTS, writeStamp } from "../../scripts/build-if-stale.mjs";
import { scratchDir } from "../support/scratch-dir.js";

const root = scratchDir("cmb-build-stamp-");
afterAll(() => rmSync(root, { recursive: true, force: true }));

function put(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe("build-if-stale", () => {
  it("stale without outputs; current after a stamp; stale again when a source file changes", () => {
    put("package.json", "{}");
    put("src/a.ts", "export const a = 1;\n");
    expect(buildIsCurrent(root)).toBe(false);
    put("dist/demo/index.js", "");
    put("dist/bin/chat-cli.cjs", "");
    writeStamp(root);
    expect(buildIsCurrent(root)).toBe(false);
    for (const output of OUTPUTS) put(output, "");
    writeStamp(root);
    expect(buildIsCurrent(root)).toBe(true);
    put("src/a.ts", "export const a = 2;\n");
    expect(buildIsCurrent(root)).toBe(false);
    writeStamp(root);
    put("src/new/b.ts", "");
    expect(buildIsCurrent(root)).toBe(false);
  });
});
