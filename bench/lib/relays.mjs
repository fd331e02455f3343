/**
 * The stdio relays the bench compares: our bridge and the pinned peers, each spawned the way a user runs it against
 * one server URL, with a JSON-RPC line client on its stdio.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LineRpcClient } from "./line-client.mjs";
import { exited } from "./processes.mjs";
import { benchDir, bridgeBin, childEnv } from "./setup.mjs";
import { nowMs } from "./stats.mjs";

export const OURS = "chat-mcp-bridge";
/** Figure 1's floor: `bench/floor-relay-child.cjs`, the least a stdio relay does before its first answer. */
export const FLOOR_RELAY = "floor: bare node:http relay";

const INITIALIZE_PARAMS = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "chat-mcp-bridge-bench", version: "1.0.0" },
};

/**
 * The relays for one server: `{ name, command: [script, ...args], env }`. Our bridge uses the stored login in
 * `configDir` (none for a server without auth); a peer gets `token` as a bearer header when there is one
 * (mcp-remote from a 0600 header file; supergateway only takes it in argv). `era: "modern"` turns on
 * mcp-remote's `--protocol auto` (its default is legacy only); supergateway and our bridge pick their own.
 */
export function relaysFor({ mcpUrl, configDir, token, peers, era = "legacy" }) {
  const relays = [
    {
      name: OURS,
      command: [bridgeBin, "--token-store", "file", mcpUrl],
      env: childEnv({ CHAT_CONFIG_DIR: configDir }),
    },
  ];
  if (!peers) return relays;
  return [...relays, ...peerRelays({ mcpUrl, configDir, token, peers, era })];
}

/** The floor relay for `mcpUrl`, its bearer token read from a 0600 file in `configDir` (as a stored login is). */
export function floorRelayFor({ mcpUrl, configDir, token }) {
  const tokenFile = join(configDir, "floor-relay-token.txt");
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  return {
    name: FLOOR_RELAY,
    command: [join(benchDir, "floor-relay-child.cjs"), mcpUrl, tokenFile],
    env: childEnv(),
  };
}

function peerRelays({ mcpUrl, configDir, token, peers, era }) {
  const relays = [];
  const mcpRemoteArgs = [peers.mcpRemote, mcpUrl, "--transport", "http-only"];
  if (token) {
    const headerFile = join(configDir, "mcp-remote-headers.txt");
    writeFileSync(headerFile, `Authorization: Bearer ${token}\n`, { mode: 0o600 });
    mcpRemoteArgs.push("--header-file", headerFile);
  }
  if (era === "modern") mcpRemoteArgs.push("--protocol", "auto");
  relays.push(
    // mcp-remote keeps its state under ~/.mcp-auth unless told otherwise: the bench's own folder instead.
    {
      name: "mcp-remote",
      command: mcpRemoteArgs,
      env: childEnv({ MCP_REMOTE_CONFIG_DIR: join(configDir, "mcp-remote") }),
    },
    {
      name: "supergateway",
      command: [
        peers.supergateway,
        "--streamableHttp",
        mcpUrl,
        "--logLevel",
        "none",
        ...(token ? ["--oauth2Bearer", token] : []),
      ],
      env: childEnv(),
    },
  );
  return relays;
}

/** Spawns `relay`; `nodeArgs` go before the script (e.g. --cpu-prof, --import a memory probe), `env` adds variables. */
export function spawnRelay(relay, nodeArgs = [], env = {}) {
  const startedAt = nowMs();
  const child = spawn(process.execPath, [...nodeArgs, ...relay.command], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...relay.env, ...env },
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  return { name: relay.name, child, rpc: new LineRpcClient(child), startedAt, stderr: () => stderr };
}

/** Sends initialize and tools/list; returns the times (ms since spawn) of both answers. */
export async function initializeRelay(running) {
  const initialize = await withTimeout(running, running.rpc.request("initialize", INITIALIZE_PARAMS));
  const initializedAt = nowMs();
  if (!initialize.result) {
    throw new Error(
      `${running.name}: initialize failed: ${JSON.stringify(initialize.error)} ${running.stderr()}`,
    );
  }
  running.rpc.notify("notifications/initialized");
  const list = await withTimeout(running, running.rpc.request("tools/list", {}));
  const listedAt = nowMs();
  if (!list.result?.tools?.some((tool) => tool.name === "get_chat")) {
    throw new Error(`${running.name}: tools/list has no get_chat: ${JSON.stringify(list).slice(0, 300)}`);
  }
  return { initializeMs: initializedAt - running.startedAt, toolsListMs: listedAt - running.startedAt };
}

/** Every wait is bounded: a relay that never answers fails the figure instead of hanging the bench. */
function withTimeout(running, promise, ms = 30_000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`${running.name}: no answer in ${ms} ms; stderr: ${running.stderr().slice(-300)}`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Closes the relay's stdin (its normal way out), then SIGTERM and SIGKILL if it lingers; waits for the exit. */
export async function stopRelay(running) {
  running.child.stdin.end();
  const term = setTimeout(() => running.child.kill("SIGTERM"), 2000);
  const kill = setTimeout(() => running.child.kill("SIGKILL"), 5000);
  await exited(running.child);
  clearTimeout(term);
  clearTimeout(kill);
}

/**
 * What a probing host sends first: `server/discover` with the 2026-07-28 `_meta`; resolves with the ms from spawn to
 * the answer and whether it was a DiscoverResult (else the error it gave).
 */
export async function probeDiscover(running) {
  const answer = await withTimeout(
    running,
    running.rpc.request("server/discover", {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": INITIALIZE_PARAMS.clientInfo,
      },
    }),
    10_000,
  );
  const ms = nowMs() - running.startedAt;
  if (Array.isArray(answer.result?.supportedVersions)) return { ms };
  return {
    ms,
    notAnswered: answer.error
      ? `answered error ${answer.error.code} ${String(answer.error.message).slice(0, 60)}`
      : "answered without supportedVersions",
  };
}
