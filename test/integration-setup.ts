/**
 * Before the integration project (it runs only when one of its tests is in the run): builds dist/ unless it was
 * built from the current sources (spawned bins run the bundle, the pack and conformance tests the library), and
 * finds a Node >= 22 binary for the conformance suites.
 */
import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain ESM script without types
import { buildIsCurrent } from "../scripts/build-if-stale.mjs";
import { ensureNode24 } from "../scripts/node-release.mjs";

export default function setup(project: TestProject): void {
  // `npm test` has built already (pretest), so this is a digest of the sources and nothing more.
  if (!buildIsCurrent(project.config.root))
    execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], {
      cwd: project.config.root,
      stdio: "inherit",
    });
  try {
    project.provide("node24", ensureNode24());
  } catch (error) {
    project.provide(
      "node24Missing",
      `could not fetch node@24 from the npm registry: ${(error as Error).message.split("\n")[0]}`,
    );
  }
}
