/**
 * Figure 7, what `npx -y chat-mcp-bridge` installs on its first run: `npm pack`, then `npm install <tarball>` into an
 * empty folder with the warm npm cache (what npx does into its own cache folder), beside `npm install
 * mcp-remote@<pinned>` the same way (the baseline). `node bench/figures/install.mjs [repo-dir]` prints it.
 */
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PEER_VERSIONS } from "../lib/peers.mjs";
import { nowMs } from "../lib/stats.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const npm = (args, cwd) =>
  execFileSync("npm", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    shell: process.platform === "win32",
    env: {
      ...process.env,
      npm_config_loglevel: "error",
      npm_config_fund: "false",
      npm_config_audit: "false",
    },
  });

/** Bytes on disk under `dir` (allocated blocks where the OS reports them, else file sizes). */
function diskBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const stat = lstatSync(path);
    total += stat.blocks ? stat.blocks * 512 : stat.size;
    if (entry.isDirectory()) total += diskBytes(path);
  }
  return total;
}

/** Installs `spec` (a tarball or name@version) into a fresh folder and describes the tree npm wrote. */
function installOnce(spec, extraArgs = []) {
  const dir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-install-"));
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "install-figure", private: true }));
    const started = nowMs();
    npm(["install", spec, "--prefer-offline", ...extraArgs], dir);
    const seconds = (nowMs() - started) / 1000;
    const lock = JSON.parse(readFileSync(join(dir, "node_modules", ".package-lock.json"), "utf8"));
    const packages = Object.entries(lock.packages).filter(([path]) => path.startsWith("node_modules/"));
    const topLevel = readdirSync(join(dir, "node_modules"))
      .filter((name) => !name.startsWith("."))
      .flatMap((name) =>
        name.startsWith("@")
          ? readdirSync(join(dir, "node_modules", name)).map((scoped) => `${name}/${scoped}`)
          : [name],
      );
    // What makes the size: each top-level package with what it nests, the heaviest first.
    const largestMB = Object.fromEntries(
      topLevel
        .map((name) => [name, Math.round(diskBytes(join(dir, "node_modules", name)) / 1e4) / 100])
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6),
    );
    return {
      seconds,
      topLevelPackages: topLevel.length,
      treePackages: packages.length,
      diskMB: diskBytes(join(dir, "node_modules")) / 1e6,
      largestMB,
      withInstallScripts: packages
        .filter(([, meta]) => meta.hasInstallScript)
        .map(([path]) => path.slice(13)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Packs the repo (dist/ as built) and installs the tarball and mcp-remote, each once to warm the cache, then
 * alternately `rounds` times; the median time and the tree of the last install.
 */
export async function measureInstall(from = repo, rounds = 3) {
  const work = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-pack-"));
  try {
    mkdirSync(work, { recursive: true });
    const [packed] = JSON.parse(
      npm(["pack", "--json", "--ignore-scripts", "--pack-destination", work], from),
    );
    const tarball = join(work, packed.filename);
    const peer = `mcp-remote@${PEER_VERSIONS["mcp-remote"]}`;
    // warm-up: fills the npm cache for both, as a user who ran npx before would find it
    installOnce(tarball);
    installOnce(peer);
    const ours = [];
    const theirs = [];
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        ours.push(installOnce(tarball));
        theirs.push(installOnce(peer));
      } else {
        theirs.push(installOnce(peer));
        ours.push(installOnce(tarball));
      }
    }
    const medianOf = (runs) => ({
      ...runs.at(-1),
      seconds: runs.map((r) => r.seconds).sort((a, b) => a - b)[Math.floor(runs.length / 2)],
    });
    return { tarball: packed.filename, rounds, default: medianOf(ours), mcpRemote: medianOf(theirs) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${JSON.stringify(await measureInstall(process.argv[2]), null, 2)}\n`);
}
