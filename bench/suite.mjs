/** The bench itself: starts the reference server, runs figures 1-7, prints the table and writes bench/results.json. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { measureBridgeStart, measureRelayConcurrency, measureRelayOverhead } from "./figures/bridge.mjs";
import { measureCli } from "./figures/cli.mjs";
import { measureChatClient } from "./figures/client.mjs";
import { measureInstall } from "./figures/install.mjs";
import { profileFigures } from "./figures/profiles.mjs";
import { loadTest } from "./figures/server.mjs";
import { buildRows, formatTable } from "./lib/report.mjs";
import { benchDir, seedChats, signInBridge, startServerChild } from "./lib/setup.mjs";
import { nowMs } from "./lib/stats.mjs";

/** Sample counts: the minimums where it sets them (20 spawns, 2,000 sequential calls, 1,000 in flight). */
export const SAMPLES = {
  bridgeSpawns: 20,
  relayCalls: 2000,
  relayWarmup: 200,
  concurrency: 1000,
  concurrencyWaves: 10,
  directWaves: 3,
  cliRuns: 10,
  clientCalls: 2000,
  clientWarmup: 200,
  serverConnections: 50,
  serverSeconds: 5,
  serverWarmupSeconds: 1,
  seededChats: 10,
};

/** Profiling runs only while the whole bench stays inside its 3-minute budget. */
const PROFILE_DEADLINE_MS = 140_000;

const progress = (text) => process.stderr.write(`bench: ${text}\n`);

/**
 * Runs the figures (all, or those numbered in `only`), prints the table and writes results.json; profiles the
 * figures that missed a target (`profile: "auto"`), all of them (`"always"`) or none (`"never"`). With
 * `measure: false` it only profiles.
 */
export async function runBench({ profile = "auto", only, measure = true } = {}) {
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0];
  if (loadAtStart > os.cpus().length) {
    progress(
      `the machine is busy (load average ${loadAtStart.toFixed(1)} on ${os.cpus().length} cores): times will be inflated`,
    );
  }
  const started = nowMs();
  const figures = {};
  const skipped = {};
  const configDir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-bench-"));
  const server = await startServerChild(join(benchDir, "server-child.mjs"));
  let floorServer;
  try {
    const chatIds = await seedChats(server, SAMPLES.seededChats);
    progress(`reference server on ${server.url}, ${chatIds.length} chats seeded`);

    let token;
    try {
      token = await signInBridge(server, configDir);
      progress("bridge signed in (file token store)");
    } catch (error) {
      skipped.bridge = `bridge login failed: ${firstLine(error)}`;
      progress(`skipping figures 1-3: ${skipped.bridge}`);
    }
    const bridgeContext = { mcpUrl: server.mcpUrl, configDir, token, chatIds };

    if (token) {
      await figure("bridgeStart", `1 bridge start (${SAMPLES.bridgeSpawns} spawns)`, () =>
        measureBridgeStart({ ...bridgeContext, spawns: SAMPLES.bridgeSpawns }),
      );
      await figure("relayOverhead", `2 relay overhead (${SAMPLES.relayCalls} calls each way)`, () =>
        measureRelayOverhead({
          ...bridgeContext,
          calls: SAMPLES.relayCalls,
          warmup: SAMPLES.relayWarmup,
        }),
      );
      await figure(
        "relayConcurrency",
        `3 relay load (${SAMPLES.concurrencyWaves} x ${SAMPLES.concurrency} in flight)`,
        () =>
          measureRelayConcurrency({
            ...bridgeContext,
            concurrency: SAMPLES.concurrency,
            waves: SAMPLES.concurrencyWaves,
            directWaves: SAMPLES.directWaves,
          }),
      );
    }
    await figure("cli", `4 chat-cli (${SAMPLES.cliRuns} runs)`, () =>
      measureCli({ server, configDir, runs: SAMPLES.cliRuns }),
    );
    await figure("chatClient", `5 ChatClient vs fetch (${SAMPLES.clientCalls} calls each)`, () =>
      measureChatClient({
        server,
        chatIds,
        calls: SAMPLES.clientCalls,
        warmup: SAMPLES.clientWarmup,
      }),
    );
    await figure(
      "server",
      `6 server (${SAMPLES.serverConnections} connections, ${SAMPLES.serverSeconds} s)`,
      async () => {
        const path = `/v2/chats/${chatIds[0]}`;
        const headers = { authorization: `Bearer ${server.apiKeys.acme}`, accept: "application/json" };
        const body = await (await fetch(`${server.url}${path}`, { headers })).text();
        const bodyFile = join(configDir, "chat.json");
        writeFileSync(bodyFile, body);
        const load = {
          connections: SAMPLES.serverConnections,
          seconds: SAMPLES.serverSeconds,
          warmupSeconds: SAMPLES.serverWarmupSeconds,
        };
        const reference = await loadTest({ url: `${server.url}${path}`, headers, ...load });
        floorServer = await startServerChild(join(benchDir, "floor-server-child.mjs"), [bodyFile]);
        const floor = await loadTest({ url: `${floorServer.url}${path}`, headers, ...load });
        await floorServer.stop();
        floorServer = undefined;
        return { reference, floor };
      },
    );

    await figure("install", "7 install from the packed tarball (default vs --omit=optional)", () =>
      measureInstall(),
    );

    const rows = buildRows(figures);
    let profiles;
    const missedFigures = new Set(
      rows.filter((row) => row.status === "MISSED").map((row) => row.figure.split(" ")[0]),
    );
    const toProfile =
      profile === "always" ? (only ?? new Set(["1", "2", "3", "4", "5", "6"])) : missedFigures;
    if (profile !== "never" && toProfile.size > 0) {
      if (profile === "auto" && nowMs() - started > PROFILE_DEADLINE_MS) {
        progress(
          "targets missed, but no time left in the budget to profile; run `npm run bench -- --profile`",
        );
      } else {
        progress(`profiling with node --cpu-prof: figures ${[...toProfile].sort().join(", ")}`);
        profiles = await profileFigures({
          server,
          bridgeContext: token ? bridgeContext : undefined,
          figureNumbers: toProfile,
          dir: join(benchDir, "profiles"),
        });
      }
    }

    const durationSeconds = (nowMs() - started) / 1000;
    const results = {
      startedAt: startedAt.toISOString(),
      durationSeconds,
      machine: {
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model,
        loadAverage1min: { atStart: loadAtStart, atEnd: os.loadavg()[0] },
        memoryMB: Math.round(os.totalmem() / 1e6),
      },
      samples: SAMPLES,
      rows,
      figures,
      skipped,
      serverStderr: server.stderrLines(),
      profiles,
    };
    writeFileSync(join(benchDir, "results.json"), `${JSON.stringify(results, null, 2)}\n`);

    process.stdout.write(`${formatTable(rows)}\n`);
    for (const [name, reason] of Object.entries(skipped))
      process.stdout.write(`not measured: ${name}: ${reason}\n`);
    if (profiles) for (const entry of profiles) process.stdout.write(`\n${entry.text}\n`);
    process.stdout.write(
      `\n${rows.filter((row) => row.status === "met").length} of ${rows.filter((row) => row.target).length} targets met; ` +
        `${durationSeconds.toFixed(0)} s on ${os.cpus().length} cores, ${process.version}, load average ` +
        `${loadAtStart.toFixed(1)} at start and ${os.loadavg()[0].toFixed(1)} at end; JSON in bench/results.json\n`,
    );
    return { rows, skipped };
  } finally {
    await floorServer?.stop();
    await server.stop();
    rmSync(configDir, { recursive: true, force: true });
  }

  async function figure(key, title, run) {
    if (!measure || (only && !only.has(title.split(" ")[0]))) return;
    const figureStarted = nowMs();
    progress(`${title}...`);
    try {
      figures[key] = await run();
      progress(`${title}: ${((nowMs() - figureStarted) / 1000).toFixed(1)} s`);
    } catch (error) {
      skipped[key] = firstLine(error);
      progress(`${title} failed: ${skipped[key]}`);
    }
  }
}

function firstLine(error) {
  return String(error instanceof Error ? error.message : error)
    .split("\n")[0]
    .slice(0, 300);
}
