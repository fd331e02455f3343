/** Figures 1-3: the bridge's start time, its per-call relay overhead over a direct client, and its behaviour under 1,000 in-flight calls. */
import { spawn } from "node:child_process";
import { LineRpcClient } from "../lib/line-client.mjs";
import { exited, readMemory, timeToExit } from "../lib/processes.mjs";
import { bridgeBin, childEnv } from "../lib/setup.mjs";
import { nowMs, summarize, timeAlternating } from "../lib/stats.mjs";

const PROTOCOL_VERSION = "2025-06-18";
const INITIALIZE_PARAMS = {
  protocolVersion: PROTOCOL_VERSION,
  capabilities: {},
  clientInfo: { name: "chat-mcp-bridge-bench", version: "1.0.0" },
};

/** Spawns a bridge on the stored login in `configDir`; `nodeArgs` go before the script (e.g. --cpu-prof). */
export function spawnBridge(mcpUrl, configDir, nodeArgs = []) {
  const startedAt = nowMs();
  const child = spawn(process.execPath, [...nodeArgs, bridgeBin, "--token-store", "file", mcpUrl], {
    stdio: ["pipe", "pipe", "pipe"],
    env: childEnv({ CHAT_CONFIG_DIR: configDir }),
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  return { child, rpc: new LineRpcClient(child), startedAt, stderr: () => stderr };
}

/** Sends initialize and tools/list; returns the times (ms since spawn) of both answers. */
export async function initializeBridge(bridge) {
  const initialize = await bridge.rpc.request("initialize", INITIALIZE_PARAMS);
  const initializedAt = nowMs();
  if (!initialize.result)
    throw new Error(`initialize failed: ${JSON.stringify(initialize.error)} ${bridge.stderr()}`);
  bridge.rpc.notify("notifications/initialized");
  const list = await bridge.rpc.request("tools/list", {});
  const listedAt = nowMs();
  if (!list.result?.tools?.some((tool) => tool.name === "get_chat")) {
    throw new Error(`tools/list has no get_chat: ${JSON.stringify(list).slice(0, 300)}`);
  }
  return { initializeMs: initializedAt - bridge.startedAt, toolsListMs: listedAt - bridge.startedAt };
}

/** Closes the bridge's stdin (its normal way out) and waits for the exit. */
export async function stopBridge(bridge) {
  bridge.child.stdin.end();
  const timer = setTimeout(() => bridge.child.kill("SIGKILL"), 5000);
  await exited(bridge.child);
  clearTimeout(timer);
}

/** Figure 1: spawn to the initialize and tools/list answers, interleaved with `node -e 0` spawned the same way. */
export async function measureBridgeStart({ mcpUrl, configDir, spawns }) {
  const initialize = [];
  const toolsList = [];
  const floor = [];
  const idleRss = [];
  // $NODE_EXTRA_CA_CERTS makes every node process read a CA file at start; measured apart when this machine sets it.
  const floorWithoutExtraCa = [];
  const withoutExtraCa = { ...childEnv() };
  delete withoutExtraCa.NODE_EXTRA_CA_CERTS;
  for (let index = 0; index < spawns; index++) {
    floor.push((await timeToExit(process.execPath, ["-e", "0"], { env: childEnv() })).ms);
    if (process.env.NODE_EXTRA_CA_CERTS) {
      floorWithoutExtraCa.push((await timeToExit(process.execPath, ["-e", "0"], { env: withoutExtraCa })).ms);
    }
    const bridge = spawnBridge(mcpUrl, configDir);
    const times = await initializeBridge(bridge);
    initialize.push(times.initializeMs);
    toolsList.push(times.toolsListMs);
    idleRss.push(readMemory(bridge.child.pid)?.peakRssMiB ?? Number.NaN);
    await stopBridge(bridge);
  }
  return {
    initializeMs: summarize(initialize),
    toolsListMs: summarize(toolsList),
    nodeFloorMs: summarize(floor),
    ...(floorWithoutExtraCa.length > 0 ? { nodeFloorWithoutExtraCaMs: summarize(floorWithoutExtraCa) } : {}),
    idlePeakRssMB: summarize(idleRss.map(mibToMB)),
    nodeFloorRssMB: await measureNodeFloorRss(),
  };
}

/** Peak RSS (MB) of `node -e` reporting its own `maxRSS`: the memory floor of any node process; median of 3. */
async function measureNodeFloorRss() {
  const floorRss = [];
  for (let index = 0; index < 3; index++) {
    const script = "process.stdout.write(String(process.resourceUsage().maxRSS))";
    const { stdout } = await timeToExit(process.execPath, ["-e", script], { env: childEnv() });
    floorRss.push((Number(stdout) * 1024) / 1e6);
  }
  return summarize(floorRss).median;
}

/** `get_chat` arguments cycling over the seeded chats, so a mismatched answer shows as the wrong chat. */
function getChatCall(chatIds, index) {
  const chatId = chatIds[index % chatIds.length];
  return { chatId, params: { name: "get_chat", arguments: { chatId } } };
}

/** The chat id an answer carries, or an error description. */
function answeredChatId(message) {
  if (message.error) return `error ${message.error.code}: ${message.error.message}`;
  if (message.result?.isError) return `tool error: ${JSON.stringify(message.result.content).slice(0, 200)}`;
  return message.result?.structuredContent?.id;
}

/** An in-process SDK client on streamable HTTP with the bridge's bearer token: the direct baseline. */
async function connectDirectClient(mcpUrl, token) {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import(
    "@modelcontextprotocol/sdk/client/streamableHttp.js"
  );
  const client = new Client({ name: "chat-mcp-bridge-bench-direct", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      // The SDK hands every fetch its one long-lived AbortSignal; undici keeps a listener on it per request until
      // GC, which warns and grows past 1,500 calls in flight. The baseline goes without it.
      fetch: (url, init) => fetch(url, { ...init, signal: undefined }),
    }),
  );
  return client;
}

/**
 * Figure 2: sequential `tools/call get_chat` through the bridge versus an in-process SDK client on the same token,
 * alternating call by call so both see the same machine load.
 */
export async function measureRelayOverhead({ mcpUrl, configDir, token, chatIds, calls, warmup, nodeArgs }) {
  const direct = await connectDirectClient(mcpUrl, token);
  const bridge = spawnBridge(mcpUrl, configDir, nodeArgs);
  await initializeBridge(bridge);

  let wrong = 0;
  let callIndex = 0;
  const bridgeCall = async () => {
    const { chatId, params } = getChatCall(chatIds, callIndex++);
    const answer = await bridge.rpc.request("tools/call", params);
    if (answeredChatId(answer) !== chatId) wrong++;
  };
  const directCall = async () => {
    const { chatId, params } = getChatCall(chatIds, callIndex++);
    const result = await direct.callTool(params);
    if (answeredChatId({ result }) !== chatId) wrong++;
  };
  const [viaBridge, viaDirect] = await timeAlternating(bridgeCall, directCall, { calls, warmup });
  await direct.close();
  await stopBridge(bridge);
  if (wrong > 0) throw new Error(`${wrong} get_chat answers named the wrong chat or failed`);

  const bridgeStats = summarize(viaBridge);
  const directStats = summarize(viaDirect);
  return { bridgeMs: bridgeStats, directMs: directStats };
}

/**
 * Figure 3: waves of `concurrency` calls written at once to one fresh bridge; every answer must come back once,
 * under its own id, for the chat it asked about. RSS read after the first wave and after the last.
 */
export async function measureRelayConcurrency({
  mcpUrl,
  configDir,
  token,
  chatIds,
  concurrency,
  waves,
  directWaves,
  nodeArgs = [],
}) {
  const bridge = spawnBridge(mcpUrl, configDir, nodeArgs);
  await initializeBridge(bridge);
  const memoryBefore = readMemory(bridge.child.pid);
  let answered = 0;
  let failed = 0;
  let mismatched = 0;
  const failures = new Set();
  let callIndex = 0;
  const waveMs = [];
  let afterFirstWave;
  for (let wave = 0; wave < waves; wave++) {
    const calls = Array.from({ length: concurrency }, () => getChatCall(chatIds, callIndex++));
    const started = nowMs();
    const answers = await Promise.all(
      bridge.rpc.requestMany(calls.map(({ params }) => ({ method: "tools/call", params }))),
    );
    waveMs.push(nowMs() - started);
    answers.forEach((answer, index) => {
      answered++;
      const got = answeredChatId(answer);
      if (got === calls[index].chatId) return;
      if (typeof got === "string" && got.startsWith("chat_")) mismatched++;
      else {
        failed++;
        if (failures.size < 5) failures.add(String(got));
      }
    });
    if (wave === 0) afterFirstWave = readMemory(bridge.child.pid);
  }
  const afterLastWave = readMemory(bridge.child.pid);
  const strays = bridge.rpc.strays.length;
  // Distinct stderr lines of the bridge (warnings under load), numbers blanked so repeats collapse.
  const bridgeStderr = [
    ...new Set(
      bridge
        .stderr()
        .split("\n")
        .filter(Boolean)
        .map((line) => line.replace(/\d+/g, "N")),
    ),
  ];
  await stopBridge(bridge);
  const totalMs = waveMs.reduce((sum, ms) => sum + ms, 0);
  return {
    concurrency,
    sent: concurrency * waves,
    answered,
    failed,
    mismatched,
    failures: [...failures],
    strays,
    callsPerSecond: (concurrency * waves) / (totalMs / 1000),
    waveMs: summarize(waveMs),
    bridgeStderr: bridgeStderr.slice(0, 5),
    nodeFloorRssMB: await measureNodeFloorRss(),
    rssBeforeMB: mibToMB(memoryBefore?.rssMiB),
    rssAfterFirstWaveMB: mibToMB(afterFirstWave?.rssMiB),
    rssAfterLastWaveMB: mibToMB(afterLastWave?.rssMiB),
    peakRssMB: mibToMB(afterLastWave?.peakRssMiB),
    direct: await measureDirectConcurrency({ mcpUrl, token, chatIds, concurrency, waves: directWaves }),
  };
}

/** The baseline of figure 3: the same waves from the in-process SDK client, straight to the server. */
async function measureDirectConcurrency({ mcpUrl, token, chatIds, concurrency, waves }) {
  const direct = await connectDirectClient(mcpUrl, token);
  let callIndex = 0;
  let failed = 0;
  const failures = new Set();
  let totalMs = 0;
  for (let wave = 0; wave < waves; wave++) {
    const calls = Array.from({ length: concurrency }, () => getChatCall(chatIds, callIndex++));
    const started = nowMs();
    const results = await Promise.all(
      calls.map(({ params }) =>
        direct
          .callTool(params, undefined, { timeout: 120_000 })
          .catch((error) => ({ error: String(error.cause ?? error) })),
      ),
    );
    totalMs += nowMs() - started;
    results.forEach((result, index) => {
      if (result.error) failures.add(result.error);
      if (result.error || answeredChatId({ result }) !== calls[index].chatId) failed++;
    });
  }
  await direct.close();
  return {
    sent: concurrency * waves,
    failed,
    failures: [...failures].slice(0, 5),
    callsPerSecond: (concurrency * waves) / (totalMs / 1000),
  };
}

/** /proc reports KiB; the targets are in MB (10^6 bytes). */
export function mibToMB(mib) {
  return mib === undefined ? Number.NaN : (mib * 1024 * 1024) / 1e6;
}
