/**
 * Figure 7, what `npx -y chat-mcp-bridge` installs on its first run: `npm pack`, then `npm install <tarball>` into an
 * empty folder with the warm npm cache (what npx does into its own cache folder), beside mcp-remote@<pinned>
 * installed the same way, from its own packed tarball, so both top-level packages take npm's path for a local file
 * (which costs more than a registry name). `node bench/figures/install.mjs [repo-dir] [rounds]` prints it.
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

/** Files under `dir`, the other half of what an install writes. */
function fileCount(dir) {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    count += entry.isDirectory() ? fileCount(join(dir, entry.name)) : 1;
  return count;
}

/**
 * CPU seconds (user + system) of this process's finished children, on Linux (`/proc/self/stat`, cutime and cstime);
 * undefined elsewhere. On a shared machine this moves far less with the load than the wall time does.
 */
function childCpuSeconds() {
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    // After "pid (comm) ", field 3 of proc(5) is index 0: cutime and cstime (fields 16 and 17) are indexes 13 and 14.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/** Installs `spec` (a tarball or name@version) into a fresh folder and describes the tree npm wrote. */
function installOnce(spec, extraArgs = []) {
  const dir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-install-"));
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "install-figure", private: true }));
    const cpuBefore = childCpuSeconds();
    const started = nowMs();
    npm(["install", spec, "--prefer-offline", ...extraArgs], dir);
    const seconds = (nowMs() - started) / 1000;
    const cpuAfter = childCpuSeconds();
    const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
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
      cpuSeconds,
      topLevelPackages: topLevel.length,
      treePackages: packages.length,
      files: fileCount(join(dir, "node_modules")),
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
 * Packs the repo (dist/ as built) and mcp-remote, installs each tarball once to warm the cache, then alternately
 * `rounds` times; the median wall and CPU times and the tree of the last install.
 */
export async function measureInstall(from = repo, rounds = 5) {
  const work = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-pack-"));
  try {
    mkdirSync(work, { recursive: true });
    const [packed] = JSON.parse(
      npm(["pack", "--json", "--ignore-scripts", "--pack-destination", work], from),
    );
    const tarball = join(work, packed.filename);
    const peerName = `mcp-remote@${PEER_VERSIONS["mcp-remote"]}`;
    const [peerPacked] = JSON.parse(npm(["pack", peerName, "--json", "--pack-destination", work], work));
    const peer = join(work, peerPacked.filename);
    // warm-up: fills the npm cache for both trees, as a user who ran npx before would find it
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
    const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const medianOf = (runs) => ({
      ...runs.at(-1),
      seconds: median(runs.map((r) => r.seconds)),
      cpuSeconds: runs.every((r) => r.cpuSeconds !== undefined) ? median(runs.map((r) => r.cpuSeconds)) : undefined,
    });
    return {
      tarball: packed.filename,
      tarballBytes: packed.size,
      tarballFiles: packed.entryCount,
      rounds,
      default: medianOf(ours),
      mcpRemote: medianOf(theirs),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rounds = process.argv[3] ? Number(process.argv[3]) : undefined;
  process.stdout.write(`${JSON.stringify(await measureInstall(process.argv[2] || repo, rounds), null, 2)}\n`);
}
