/**
 * A/B of the bins' start between builds: `node bench/ab-start.mjs [--rounds=21] <dir> <dir> ...` (run it with the Node
 * to measure),
 * each dir a copy of the package (bin/, dist/bin/, package.json). Alternating in every round: `chat-mcp-bridge
 * --version` and `chat-cli --version` to exit, and a bridge from spawn to its answer to `initialize` against the
 * reference server (the 2025 era, its stored login). Prints the median of each figure per dir.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { timeToExit } from "./lib/processes.mjs";
import { initializeRelay, spawnRelay, stopRelay } from "./lib/relays.mjs";
import { benchDir, childEnv, signInBridge, startServerChild } from "./lib/setup.mjs";
import { summarize } from "./lib/stats.mjs";

const args = process.argv.slice(2);
const flag = (name, fallback) =>
  args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const rounds = Number(flag("rounds", "21"));
const node = process.execPath;
const dirs = args.filter((arg) => !arg.startsWith("--")).map((dir) => resolve(dir));
if (dirs.length === 0) {
  process.stderr.write("usage: node bench/ab-start.mjs [--rounds=21] <dir> <dir> ...\n");
  process.exit(2);
}

const server = await startServerChild(join(benchDir, "server-child.mjs"), ["--mcp-era=legacy"]);
const configDir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-ab-"));
try {
  await signInBridge(server, configDir);
  const samples = new Map(dirs.map((dir) => [dir, { bridgeVersion: [], cliVersion: [], initialize: [] }]));
  for (let round = 0; round < rounds; round++) {
    const order = dirs.map((_, index) => dirs[(index + round) % dirs.length]);
    for (const dir of order) {
      const own = samples.get(dir);
      const bridge = join(dir, "bin", "chat-mcp-bridge.js");
      own.bridgeVersion.push((await timeToExit(node, [bridge, "--version"], { env: childEnv() })).ms);
      own.cliVersion.push(
        (await timeToExit(node, [join(dir, "bin", "chat-cli.js"), "--version"], { env: childEnv() })).ms,
      );
      const running = spawnRelay({
        name: dir,
        command: [bridge, "--token-store", "file", server.mcpUrl],
        env: childEnv({ CHAT_CONFIG_DIR: configDir }),
      });
      try {
        own.initialize.push((await initializeRelay(running)).initializeMs);
      } finally {
        await stopRelay(running);
      }
    }
  }
  process.stdout.write(`${rounds} rounds, ${process.version}, load average ${os.loadavg()[0].toFixed(1)}\n`);
  for (const [dir, own] of samples) {
    const median = (values) => summarize(values).median.toFixed(1);
    process.stdout.write(
      `${dir}: bridge --version ${median(own.bridgeVersion)} ms, chat-cli --version ${median(own.cliVersion)} ms, ` +
        `bridge spawn -> initialize ${median(own.initialize)} ms\n`,
    );
  }
} finally {
  await server.stop();
  rmSync(configDir, { recursive: true, force: true });
}
