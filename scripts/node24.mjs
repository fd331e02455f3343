// The Node 22+ binary the MCP conformance suite needs: this Node when new enough, else node@24 from the npm registry,
// fetched once into the user's cache dir (outside the repo). `node scripts/node24.mjs` prints its path.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
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

/** The path of a Node >= 22 binary, fetching node@24 on first use. Throws with what went wrong. */
export function ensureNode24() {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  const prefix = join(testCacheDir(), "node24");
  const binary = join(
    prefix,
    "node_modules",
    "node",
    "bin",
    process.platform === "win32" ? "node.exe" : "node",
  );
  if (!existsSync(binary)) {
    process.stderr.write(
      `Fetching node@24 from the npm registry into ${prefix} (once; the conformance suite needs it)\n`,
    );
    // The `node` package's install script fetches the binary for this platform (node-<os>-<arch>).
    execFileSync(
      "npm",
      ["install", "--prefix", prefix, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "node@24"],
      {
        stdio: ["ignore", "ignore", "inherit"],
        shell: process.platform === "win32",
      },
    );
  }
  if (!existsSync(binary)) throw new Error(`npm installed node@24 into ${prefix} but ${binary} is missing`);
  return binary;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${ensureNode24()}\n`);
}
