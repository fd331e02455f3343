// The AI coding CLIs that `npm run test:hosts` runs, installed at pinned versions from the npm registry into the test
// cache (outside the repo), one folder each: `<cache>/hosts/<name>@<version>`. Idempotent; prints one line per host.
// `node scripts/install-hosts.mjs [--json]` installs the missing ones and prints their binaries.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { installIntoCache, testCacheDir } from "./node-release.mjs";

/** The hosts, their pinned versions and the binary each package puts in node_modules/.bin. */
export const HOSTS = [
  { name: "claude-code", pkg: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  { name: "gemini-cli", pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
  { name: "codex", pkg: "@openai/codex", version: "0.171.0", bin: "codex" },
  { name: "copilot", pkg: "@github/copilot", version: "1.0.102", bin: "copilot" },
  { name: "opencode", pkg: "opencode-ai", version: "1.18.33", bin: "opencode" },
  { name: "qwen-code", pkg: "@qwen-code/qwen-code", version: "0.24.4", bin: "qwen" },
  // For comparison in the notes only: not a cell of the suite.
  { name: "mcp-remote", pkg: "mcp-remote", version: "0.15.1", bin: "mcp-remote" },
];

/** The folder a host is installed into. */
export function hostDir(host) {
  return join(testCacheDir(), "hosts", `${host.name}@${host.version}`);
}

/** The path of a host's binary (installed or not). */
export function hostBin(host) {
  return join(hostDir(host), "node_modules", ".bin", host.bin);
}

/** Installs one host when its binary is missing; returns its binary. Throws with npm's own words. */
export function ensureHost(host) {
  const bin = hostBin(host);
  if (existsSync(bin)) return bin;
  const dir = hostDir(host);
  process.stderr.write(`Installing ${host.pkg}@${host.version} from the npm registry into ${dir} (once)\n`);
  installIntoCache(dir, `${host.pkg}@${host.version}`, { extraArgs: ["--include=optional"] });
  if (!existsSync(bin))
    throw new Error(`npm installed ${host.pkg}@${host.version} into ${dir} but ${bin} is missing`);
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const only = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const result = {};
  let failed = 0;
  for (const host of HOSTS.filter((h) => only.length === 0 || only.includes(h.name))) {
    try {
      result[host.name] = ensureHost(host);
    } catch (error) {
      failed++;
      result[host.name] = null;
      process.stderr.write(`${host.name}: ${error instanceof Error ? error.message : error}\n`);
    }
  }
  if (process.argv.includes("--json")) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else
    for (const [name, bin] of Object.entries(result)) process.stdout.write(`${name}\t${bin ?? "(failed)"}\n`);
  process.exit(failed ? 1 : 0);
}
