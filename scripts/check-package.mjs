// Checks the package as npm packs it: publint (package.json against the files shipped) and arethetypeswrong (each
// export's types and JavaScript, for import and require, under every resolution TypeScript users have). Exit 1 on
// any finding. Build first (`npm run build`); .ci/run calls it as `npm run check:package`.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const work = mkdtempSync(join(tmpdir(), "cmb-check-package-"));
const bin = (name) => join("node_modules", ".bin", process.platform === "win32" ? `${name}.cmd` : name);
let failed = false;
try {
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], {
      encoding: "utf8",
      shell: process.platform === "win32",
    }),
  );
  const tarball = join(work, packed.filename);
  for (const [name, args] of [
    ["publint", [bin("publint"), "run", tarball, "--strict"]],
    // node16 profile: TypeScript's node10 resolution predates `exports` and cannot see subpaths (./server,
    // ./testing); it is deprecated, and no Node this package runs on resolves that way.
    ["attw", [bin("attw"), tarball, "--profile", "node16", "--format", "table-flipped"]],
  ]) {
    process.stdout.write(`\n$ ${name} ${packed.filename}\n`);
    try {
      execFileSync(args[0], args.slice(1), { stdio: "inherit", shell: process.platform === "win32" });
    } catch {
      failed = true;
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
