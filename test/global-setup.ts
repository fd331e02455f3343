/** Bundles the bins once before the suite, so spawned-process tests always run the current source. */
import { execFileSync } from "node:child_process";

export default function setup(): void {
  execFileSync(process.execPath, ["scripts/bundle.mjs"], { stdio: "inherit" });
}
