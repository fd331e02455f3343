/**
 * Before the integration project (it runs only when one of its tests is in the run): builds dist/ unless it was
 * built from the current sources (spawned bins run the bundle, the pack and conformance tests the library).
 */
import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain ESM script without types
import { buildIsCurrent } from "../scripts/build-if-stale.mjs";

export default function setup(project: TestProject): void {
  // `npm test` has built already (pretest), so this is a digest of the sources and nothing more.
  if (!buildIsCurrent(project.config.root))
    execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], {
      cwd: project.config.root,
      stdio: "inherit",
    });
}
