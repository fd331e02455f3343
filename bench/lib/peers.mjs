/** The peers the bench runs beside our bridge (mcp-remote, supergateway), pinned, installed once into a cache folder outside the repo. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";

/** Pinned versions: a figure beside a peer means that exact release. */
export const PEER_VERSIONS = { "mcp-remote": "0.15.1", supergateway: "4.0.0" };

/** `$XDG_CACHE_HOME/chat-mcp-bridge/bench-peers` (or `~/.cache/...`): never the repo, never package.json. */
export function peersDir() {
  const cacheHome = process.env.XDG_CACHE_HOME || join(os.homedir(), ".cache");
  return join(cacheHome, "chat-mcp-bridge", "bench-peers");
}

function installedVersion(dir, name) {
  try {
    return JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

/**
 * Installs the pinned peers into the cache folder unless they are there already; returns the path of each peer's
 * stdio entry point. `npm install` runs with scripts off (neither peer needs one).
 */
export function ensurePeers({ progress = () => {} } = {}) {
  const dir = peersDir();
  const missing = Object.entries(PEER_VERSIONS).filter(
    ([name, version]) => installedVersion(dir, name) !== version,
  );
  if (missing.length > 0) {
    mkdirSync(dir, { recursive: true });
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) writeFileSync(manifest, '{ "name": "bench-peers", "private": true }\n');
    const specs = Object.entries(PEER_VERSIONS).map(([name, version]) => `${name}@${version}`);
    progress(`installing ${specs.join(", ")} into ${dir}`);
    execFileSync(
      "npm",
      ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline", ...specs],
      {
        cwd: dir,
        stdio: ["ignore", "ignore", "pipe"],
        shell: process.platform === "win32",
        timeout: 300_000,
      },
    );
  }
  const modules = join(dir, "node_modules");
  return {
    dir,
    mcpRemote: join(modules, "mcp-remote", "dist", "proxy.js"),
    supergateway: join(modules, "supergateway", "dist", "index.js"),
  };
}
