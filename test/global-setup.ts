/**
 * Before the suite: bundles the bins (spawned-process tests run the current source), finds a Node >= 22 binary,
 * and gives the run a private temp folder; after it, lists and removes what tests left there (test/support/leftovers).
 */
import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { ensureNode24 } from "../scripts/node-release.mjs";
import { checkLeftovers, usePrivateTempDir } from "./support/leftovers.js";

export default function setup(project: TestProject): () => void {
  execFileSync(process.execPath, ["scripts/bundle.mjs"], { stdio: "inherit" });
  try {
    project.provide("node24", ensureNode24());
  } catch (error) {
    project.provide(
      "node24Missing",
      `could not fetch node@24 from the npm registry: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  const systemTemp = process.env.TMPDIR;
  const dir = usePrivateTempDir();
  return () => {
    if (systemTemp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = systemTemp;
    const clean = checkLeftovers(dir, {
      strict: process.env.CHAT_TEST_STRICT === "1",
      write: (text) => process.stdout.write(text),
    });
    if (!clean) process.exitCode = 1;
  };
}
