/**
 * `npm run bench`: builds dist/ if it is missing, then runs the bench (bench/suite.mjs).
 * Flags: --only=1,2 (those figures only), --profile (CPU-profile every figure's part, or those of --only),
 * --profile-only (profile without measuring), --no-profile (never; by default the parts behind missed targets),
 * --soak=<seconds> (the soak's length; 120 s by default).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const needed = [
  "dist/index.js",
  "dist/server/index.js",
  "dist/auth/index.js",
  "dist/bin/chat-mcp-bridge.cjs",
  "dist/bin/chat-cli.cjs",
];
const missing = needed.filter((path) => !existsSync(`${root}${path}`));
if (missing.length > 0) {
  process.stderr.write(`bench: ${missing.join(", ")} missing; running npm run build\n`);
  const build = spawnSync("npm", ["run", "build"], {
    cwd: root,
    stdio: ["ignore", 2, 2],
    shell: process.platform === "win32", // npm is npm.cmd there
  });
  if (build.status !== 0) {
    process.stderr.write("bench: npm run build failed\n");
    process.exit(1);
  }
}

const args = process.argv.slice(2);
const measure = !args.includes("--profile-only");
const profile =
  args.includes("--profile") || !measure ? "always" : args.includes("--no-profile") ? "never" : "auto";
const onlyFlag = args.find((arg) => arg.startsWith("--only="));
const only = onlyFlag ? new Set(onlyFlag.slice("--only=".length).split(",")) : undefined;
const soakFlag = args.find((arg) => arg.startsWith("--soak="));
const soakSeconds = soakFlag ? Number(soakFlag.slice("--soak=".length)) : undefined;
const { runBench } = await import("./suite.mjs");
await runBench({ profile, only, measure, soakSeconds });
