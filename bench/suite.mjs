/**
 * The bench itself: starts the reference server and the modern fixture, installs the pinned peers, runs the figures
 * (our bridge and each peer alternating in one run), prints the table with MET/MISSED per target and writes
 * bench/results.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { measureCli } from "./figures/cli.mjs";
import { measureChatClient } from "./figures/client.mjs";
import { measureDpop } from "./figures/dpop.mjs";
import { measureInstall } from "./figures/install.mjs";
import { measureLargeAnswers } from "./figures/large-answers.mjs";
import { formatMemoryProfile, profileMemory } from "./figures/memory.mjs";
import { profileFigures } from "./figures/profiles.mjs";
import { measureConcurrency, measureRelayOverhead, measureStart } from "./figures/relays.mjs";
import { loadTest, recordToolCall } from "./figures/server.mjs";
import { measureSoak } from "./figures/soak.mjs";
import { ensurePeers, PEER_VERSIONS } from "./lib/peers.mjs";
import { floorRelayFor, relaysFor } from "./lib/relays.mjs";
import { buildRows, formatTable } from "./lib/report.mjs";
import { benchDir, seedChats, signInBridge, startServerChild } from "./lib/setup.mjs";
import { nowMs } from "./lib/stats.mjs";

/**
 * Sample counts, sized so the whole bench with three relays stays within a few minutes on 2 cores.
 * `--soak=<s>` sets the soak's length (a 24 h session on a 1 h token is 24 refreshes; 120 s at 2 s tokens is 60).
 */
export const SAMPLES = {
  startRounds: 10,
  relayCalls: 500,
  relayWarmup: 50,
  concurrency: 1000,
  concurrencyWaves: 3,
  cliRuns: 20,
  clientCalls: 1000,
  clientWarmup: 100,
  serverConnections: 50,
  serverSeconds: 3,
  serverWarmupSeconds: 1,
  seededChats: 10,
  installRounds: 5,
  soakSeconds: 120,
  soakInFlight: 20,
  largeRounds: 3,
};

/** CPU profiling runs only while the whole bench stays inside its budget. */
const PROFILE_DEADLINE_MS = 300_000;

const progress = (text) => process.stderr.write(`bench: ${text}\n`);

/**
 * Runs the figures (all, or those numbered in `only`), prints the table and writes results.json; CPU-profiles the
 * figures that missed a target (`profile: "auto"`), all of them (`"always"`) or none (`"never"`). With
 * `measure: false` it only profiles.
 */
export async function runBench({ profile = "auto", only, measure = true, soakSeconds } = {}) {
  const samples = { ...SAMPLES, ...(soakSeconds ? { soakSeconds } : {}) };
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
  const wants = (number) => !only || only.has(number);
  const configDir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-bench-"));
  // A 2025-only server for the relays: our bridge and the peers all speak the 2025 era to it (our bridge would
  // pick 2026-07-28 on a dual-era server, the peers not), so figures 1-3 compare like with like.
  const server = await startServerChild(join(benchDir, "server-child.mjs"), ["--mcp-era=legacy"]);
  const children = [];
  try {
    const chatIds = await seedChats(server, samples.seededChats);
    progress(`reference server on ${server.url}, ${chatIds.length} chats seeded`);

    let peers;
    if (measure && ["1", "2", "3", "9", "11"].some(wants)) {
      try {
        peers = ensurePeers({ progress });
      } catch (error) {
        skipped.peers = `installing ${Object.keys(PEER_VERSIONS).join(", ")} failed: ${firstLine(error)}`;
        progress(`measuring our bridge alone: ${skipped.peers}`);
      }
    }

    let token;
    try {
      token = await signInBridge(server, configDir);
      progress("bridge signed in (file token store)");
    } catch (error) {
      skipped.bridge = `bridge login failed: ${firstLine(error)}`;
      progress(`skipping figures 1-3: ${skipped.bridge}`);
    }
    const bridgeContext = { mcpUrl: server.mcpUrl, configDir, token, chatIds };
    const relays = token ? relaysFor({ ...bridgeContext, peers }) : [];

    if (token) {
      await figure("start", `1 start to first answer (${samples.startRounds} rounds)`, () =>
        measureStart({ relays: [...relays, floorRelayFor(bridgeContext)], rounds: samples.startRounds }),
      );
      await figure("relayLegacy", `2 relay overhead, 2025 era (${samples.relayCalls} calls each)`, () =>
        measureRelayOverhead({
          relays,
          mcpUrl: server.mcpUrl,
          token,
          chatIds,
          calls: samples.relayCalls,
          warmup: samples.relayWarmup,
          era: "legacy",
        }),
      );
    }
    await figure(
      "relayModern",
      `2 relay overhead, 2026-07-28 era (${samples.relayCalls} calls each)`,
      async () => {
        // The modern fixture serves the same chats without sign-in; its per-era counts tell which era each relay spoke.
        const chatsFile = join(configDir, "chats.json");
        const chats = await Promise.all(
          chatIds.map(async (id) => {
            const response = await fetch(`${server.url}/v2/chats/${id}`, {
              headers: { authorization: `Bearer ${server.apiKeys.acme}` },
            });
            return response.json();
          }),
        );
        writeFileSync(chatsFile, JSON.stringify(chats));
        const modern = await startServerChild(join(benchDir, "modern-server-child.mjs"), [chatsFile]);
        children.push(modern);
        const modernDir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-bench-modern-"));
        try {
          return await measureRelayOverhead({
            relays: relaysFor({ mcpUrl: modern.mcpUrl, configDir: modernDir, peers, era: "modern" }),
            mcpUrl: modern.mcpUrl,
            chatIds,
            calls: samples.relayCalls,
            warmup: samples.relayWarmup,
            era: "modern",
            eraCounts: async () => (await fetch(`${modern.url}/bench-stats`)).json(),
          });
        } finally {
          rmSync(modernDir, { recursive: true, force: true });
        }
      },
    );
    if (token) {
      await figure(
        "load",
        `3 load (${samples.concurrencyWaves} waves of ${samples.concurrency} in flight per relay)`,
        () =>
          measureConcurrency({
            relays,
            mcpUrl: server.mcpUrl,
            token,
            chatIds,
            concurrency: samples.concurrency,
            waves: samples.concurrencyWaves,
          }),
      );
      await figure("memory", `9 memory profile of our bridge (${samples.concurrency} in flight)`, () =>
        profileMemory({ relay: relays[0], chatIds, concurrency: samples.concurrency }),
      );
    }
    await figure(
      "dpop",
      `10 DPoP on beside off (${samples.relayCalls} calls, ${samples.concurrencyWaves} waves each)`,
      () =>
        measureDpop({
          configDir,
          chats: samples.seededChats,
          calls: samples.relayCalls,
          warmup: samples.relayWarmup,
          concurrency: samples.concurrency,
          waves: samples.concurrencyWaves,
        }),
    );
    await figure("cli", `4 chat-cli (${samples.cliRuns} runs)`, () =>
      measureCli({ server, configDir, runs: samples.cliRuns }),
    );
    await figure("chatClient", `5 ChatClient vs fetch (${samples.clientCalls} calls each)`, () =>
      measureChatClient({
        server,
        chatIds,
        calls: samples.clientCalls,
        warmup: samples.clientWarmup,
      }),
    );
    await figure(
      "server",
      `6 server (${samples.serverConnections} connections, ${samples.serverSeconds} s per row)`,
      () => measureServer({ samples, children }),
    );
    await figure("install", "7 npx -y: install from the packed tarball vs mcp-remote", () =>
      measureInstall(undefined, samples.installRounds),
    );
    await figure("large", `11 large messages (${samples.largeRounds} rounds)`, async () => {
      const largeDir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-bench-large-"));
      try {
        return await measureLargeAnswers({ peers, configDir: largeDir, rounds: samples.largeRounds });
      } finally {
        rmSync(largeDir, { recursive: true, force: true });
      }
    });
    await figure("soak", `8 soak (${samples.soakSeconds} s, access token expiring every 2 s)`, async () => {
      const soakDir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-bench-soak-"));
      try {
        return {
          ...(await measureSoak({
            configDir: soakDir,
            seconds: samples.soakSeconds,
            inFlight: samples.soakInFlight,
          })),
          peerReason: "peers take a fixed bearer header and cannot refresh it",
        };
      } finally {
        rmSync(soakDir, { recursive: true, force: true });
      }
    });

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

    const memoryText = figures.memory ? formatMemoryProfile(figures.memory) : undefined;
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
      samples,
      peers: PEER_VERSIONS,
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
    if (memoryText) process.stdout.write(`\n${memoryText}\n`);
    if (profiles) for (const entry of profiles) process.stdout.write(`\n${entry.text}\n`);
    process.stdout.write(
      `\n${rows.filter((row) => row.status === "MET").length} of ${rows.filter((row) => row.target).length} targets met; ` +
        `${durationSeconds.toFixed(0)} s on ${os.cpus().length} cores, ${process.version}, load average ` +
        `${loadAtStart.toFixed(1)} at start and ${os.loadavg()[0].toFixed(1)} at end; JSON in bench/results.json\n`,
    );
    return { rows, skipped };
  } finally {
    for (const child of children) await child.stop();
    await server.stop();
    rmSync(configDir, { recursive: true, force: true });
  }

  async function figure(key, title, run) {
    if (!measure || !wants(title.split(" ")[0])) return;
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

/**
 * Figure 6's rows: `GET /v2/chats/{id}` and `tools/call get_chat` in each era on a reference server serving both
 * eras (its own, signed in apart), each beside bare node:http sending the same answer bytes. A row whose era the
 * server does not speak says so.
 */
async function measureServer({ samples, children }) {
  const server = await startServerChild(join(benchDir, "server-child.mjs"), ["--mcp-era=both"]);
  children.push(server);
  const configDir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-bench-server-"));
  try {
    const chatIds = await seedChats(server, 1);
    const token = await signInBridge(server, configDir).catch(() => undefined);
    return await measureServerRows({ server, token, chatIds, samples, configDir, children });
  } finally {
    rmSync(configDir, { recursive: true, force: true });
  }
}

async function measureServerRows({ server, token, chatIds, samples, configDir, children }) {
  const load = {
    connections: samples.serverConnections,
    seconds: samples.serverSeconds,
    warmupSeconds: samples.serverWarmupSeconds,
  };
  const results = {};
  const beside = async (name, { url, headers, post, answer, contentType }) => {
    const reference = await loadTest({ url, headers, post, ...load });
    const bodyFile = join(configDir, `${name.replace(/\W+/g, "-")}.body`);
    writeFileSync(bodyFile, answer);
    const floorServer = await startServerChild(join(benchDir, "floor-server-child.mjs"), [
      bodyFile,
      contentType,
    ]);
    children.push(floorServer);
    const floor = await loadTest({
      url: `${floorServer.url}${new URL(url).pathname}`,
      headers,
      post,
      ...load,
    });
    await floorServer.stop();
    children.splice(children.indexOf(floorServer), 1);
    results[name] = { reference, floor };
  };

  const path = `/v2/chats/${chatIds[0]}`;
  const restHeaders = { authorization: `Bearer ${server.apiKeys.acme}`, accept: "application/json" };
  const restAnswer = await fetch(`${server.url}${path}`, { headers: restHeaders });
  await beside("GET /v2/chats/{id}", {
    url: `${server.url}${path}`,
    headers: restHeaders,
    answer: await restAnswer.text(),
    contentType: restAnswer.headers.get("content-type") ?? "application/json",
  });
  for (const era of ["legacy", "modern"]) {
    const name = `tools/call get_chat, ${era === "modern" ? "2026-07-28" : "2025"} era`;
    if (!token) {
      results[name] = { notMeasured: "no bridge login (no OAuth token for /mcp)" };
      continue;
    }
    let recorded;
    try {
      recorded = await recordToolCall({ mcpUrl: server.mcpUrl, token, chatId: chatIds[0], era });
    } catch (error) {
      results[name] = { notMeasured: `the server does not speak it yet: ${firstLine(error).slice(0, 100)}` };
      continue;
    }
    try {
      await beside(name, {
        url: server.mcpUrl,
        headers: recorded.headers,
        post: { body: recorded.body },
        ...recorded,
      });
    } finally {
      await recorded.client.close();
    }
  }
  return results;
}
