/**
 * `npm run hops`: ARCHITECTURE.md's table of what one warm `tools/call` crosses in the bridge, for each pair of client
 * and server era, from V8 precise coverage of the relay running in this process (the reference server runs in a
 * child, so only the relay's code counts). Needs `npm run build` (it runs dist/, tsc's output of src/).
 * `--write` puts the table into ARCHITECTURE.md between its hops markers; `--check` exits 1 when they differ.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import os from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { benchDir, seedChats, signInBridge, startServerChild } from "../bench/lib/setup.mjs";

const root = fileURLToPath(new URL("../", import.meta.url));
const ARCHITECTURE = join(root, "ARCHITECTURE.md");
const START = "<!-- hops:start (npm run hops -- --write) -->";
const END = "<!-- hops:end -->";
/** Warm-up calls before the measured one: every module the call path needs is loaded and has run once. */
const WARM_CALLS = 3;
/** An answer the relay owes must come within this; a hang fails the script instead of stalling it. */
const ANSWER_MS = 15_000;

const CLIENT_INFO = { name: "chat-mcp-bridge-hops", version: "1.0.0" };
const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
};

const session = new Session();
session.connect();
await session.post("Profiler.enable");
// Started before the relay's modules load, so each function's calls are counted from its first.
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
const { parseBridgeArgs } = await import("../dist/bridge/command/arguments.js");
const { runRelay } = await import("../dist/bridge/relay/run.js");

/** The src/ modules (from their dist/ files) with a function that ran since the last take, and how many functions ran. */
async function takeRun() {
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const modules = new Set();
  let functions = 0;
  for (const script of result) {
    const match = /\/dist\/((?:auth|bridge|config|internal|wire)\/.+)\.js$/.exec(script.url);
    if (!match) continue;
    // The module's own top level ran when it loaded; only the functions called since count.
    const ran = script.functions.filter((fn) => fn.functionName !== "" && fn.ranges[0].count > 0);
    if (ran.length === 0) continue;
    modules.add(`src/${match[1]}.ts`);
    functions += ran.length;
  }
  return { modules, functions };
}

/** One relay in this process on paired streams, and a line client over them. */
async function startRelay(args, env) {
  const command = parseBridgeArgs(["node", "chat-mcp-bridge", ...args], env, () => {});
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let log = "";
  stderr.setEncoding("utf8").on("data", (chunk) => {
    log += chunk;
  });
  const waiting = new Map();
  let partial = "";
  stdout.setEncoding("utf8").on("data", (chunk) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const message = JSON.parse(line);
      if (message.id !== undefined && !message.method) waiting.get(message.id)?.(message);
    }
  });
  const relay = await runRelay(command.options, { stdin, stdout, stderr, env });
  let nextId = 1;
  return {
    request(method, params) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no answer to ${method} in ${ANSWER_MS} ms; log:\n${log}`)),
          ANSWER_MS,
        );
        waiting.set(id, (message) => {
          clearTimeout(timer);
          waiting.delete(id);
          if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
          else resolve(message.result);
        });
        stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      });
    },
    notify(method) {
      stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
    },
    async close() {
      stdin.end();
      await relay.closed;
    },
  };
}

/** The modules and functions of one warm `get_chat` call from a client of `clientEra` through a relay with `extraArgs`. */
async function measure(server, configDir, chatId, clientEra, extraArgs) {
  const env = { CHAT_CONFIG_DIR: configDir, PATH: process.env.PATH, HOME: process.env.HOME };
  const relay = await startRelay(["--token-store", "file", ...extraArgs, server.mcpUrl], env);
  try {
    const meta = clientEra === "modern" ? { _meta: MODERN_META } : {};
    if (clientEra === "modern") await relay.request("server/discover", { ...meta });
    else {
      await relay.request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: CLIENT_INFO,
      });
      relay.notify("notifications/initialized");
    }
    await relay.request("tools/list", { ...meta });
    const call = () => relay.request("tools/call", { name: "get_chat", arguments: { chatId }, ...meta });
    for (let index = 0; index < WARM_CALLS; index++) await call();
    await takeRun();
    const result = await call();
    const run = await takeRun();
    if (result.structuredContent?.id !== chatId)
      throw new Error(`get_chat answered ${JSON.stringify(result)}`);
    return run;
  } finally {
    await relay.close();
  }
}

const ERAS = { legacy: "2025", modern: "2026-07-28" };
const rows = [];
for (const serverEra of ["legacy", "modern"]) {
  const server = await startServerChild(join(benchDir, "server-child.mjs"), [`--mcp-era=${serverEra}`]);
  const configDir = await mkdtemp(join(os.tmpdir(), "chat-mcp-bridge-hops-"));
  try {
    const [chatId] = await seedChats(server, 1);
    await signInBridge(server, configDir);
    for (const clientEra of ["legacy", "modern"]) {
      const plain = await measure(server, configDir, chatId, clientEra, []);
      const filtered = await measure(server, configDir, chatId, clientEra, ["--ignore-tool", "delete_*"]);
      rows.push({ clientEra, serverEra, plain, filtered });
    }
  } finally {
    await server.stop();
    rmSync(configDir, { recursive: true, force: true });
  }
}
session.disconnect();

// Functions are printed, not written: a timer that fires during the call can add one, while the modules hold.
const table = [
  "| stdio client | server | modules that run (with `--ignore-tool`) |",
  "|---|---|---|",
  ...rows.map(
    ({ clientEra, serverEra, plain, filtered }) =>
      `| ${ERAS[clientEra]} | ${ERAS[serverEra]} | ${plain.modules.size} (${filtered.modules.size}) |`,
  ),
].join("\n");
const modulesOf = rows
  .map(
    ({ clientEra, serverEra, plain }) =>
      `${ERAS[clientEra]} client, ${ERAS[serverEra]} server (${plain.functions} functions): ` +
      [...plain.modules].sort().join(", "),
  )
  .join("\n");

const args = process.argv.slice(2);
if (args.includes("--write") || args.includes("--check")) {
  const text = readFileSync(ARCHITECTURE, "utf8");
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`ARCHITECTURE.md has no ${START} ... ${END} markers`);
  const current = text.slice(start + START.length, end).trim();
  if (args.includes("--check")) {
    if (current !== table) {
      process.stderr.write(
        `ARCHITECTURE.md's hop table differs from the code's; run npm run hops -- --write\n`,
      );
      process.stdout.write(`${table}\n`);
      process.exit(1);
    }
  } else writeFileSync(ARCHITECTURE, `${text.slice(0, start + START.length)}\n${table}\n${text.slice(end)}`);
}
process.stdout.write(`${table}\n\n${modulesOf}\n`);
process.exit(0);
