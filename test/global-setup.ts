/** Before the suite: bundles the bins (spawned-process tests run the current source) and finds a Node >= 22 binary. */
import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { ensureNode24 } from "../scripts/node24.mjs";

export default function setup(project: TestProject): void {
  execFileSync(process.execPath, ["scripts/bundle.mjs"], { stdio: "inherit" });
  try {
    project.provide("node24", ensureNode24());
  } catch (error) {
    project.provide(
      "node24Missing",
      `could not fetch node@24 from the npm registry: ${(error as Error).message.split("\n")[0]}`,
    );
  }
}
