/**
 * Figures 1-3 for every relay (our bridge and the peers) in the same run, alternating: start to first answer beside
 * `node -e 0`, per-call relay overhead over a direct SDK v2 client (each protocol era), and 1,000 calls in flight.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { readMemory, timeToExit } from "../lib/processes.mjs";
import { initializeRelay, OURS, probeDiscover, spawnRelay, stopRelay } from "../lib/relays.mjs";
import { childEnv } from "../lib/setup.mjs";
import { nowMs, summarize } from "../lib/stats.mjs";

/** `items` rotated by `round`, so no relay always goes first (or right after the baseline). */
const rotated = (items, round) => items.map((_, index) => items[(index + round) % items.length]);

/** /proc reports KiB; the targets are in MB (10^6 bytes). */
export function mibToMB(mib) {
  return mib === undefined ? Number.NaN : (mib * 1024 * 1024) / 1e6;
}

/**
 * Figure 1: spawn to the initialize and tools/list answers of each relay, with `node -e 0` in every round, and a
 * probing copy of our bridge (its first message `server/discover`, as hosts probe).
 */
export async function measureStart({ relays, rounds }) {
  const samples = Object.fromEntries(
    relays.map((relay) => [relay.name, { initialize: [], toolsList: [], idleRss: [] }]),
  );
  const floor = [];
  const discover = { ms: [], notAnswered: undefined };
  const ours = relays.find((relay) => relay.name === OURS);
  const probe = { name: "probe" };
  for (let round = 0; round < rounds; round++) {
    for (const relay of rotated([undefined, probe, ...relays], round)) {
      if (!relay) {
        floor.push((await timeToExit(process.execPath, ["-e", "0"], { env: childEnv() })).ms);
        continue;
      }
      if (relay === probe) {
        const running = spawnRelay(ours);
        try {
          const answer = await probeDiscover(running).catch((error) => ({
            notAnswered: String(error.message),
          }));
          if (answer.notAnswered) discover.notAnswered = answer.notAnswered.slice(0, 120);
          else discover.ms.push(answer.ms);
        } finally {
          await stopRelay(running);
        }
        continue;
      }
      const running = spawnRelay(relay);
      try {
        const times = await initializeRelay(running);
        samples[relay.name].initialize.push(times.initializeMs);
        samples[relay.name].toolsList.push(times.toolsListMs);
        samples[relay.name].idleRss.push(mibToMB(readMemory(running.child.pid)?.peakRssMiB));
      } finally {
        await stopRelay(running);
      }
    }
  }
  return {
    nodeFloorMs: summarize(floor),
    nodeFloorRssMB: await measureNodeFloorRss(),
    discover: { ms: summarize(discover.ms), notAnswered: discover.notAnswered },
    relays: Object.fromEntries(
      Object.entries(samples).map(([name, s]) => [
        name,
        {
          initializeMs: summarize(s.initialize),
          toolsListMs: summarize(s.toolsList),
          idlePeakRssMB: summarize(s.idleRss),
        },
      ]),
    ),
  };
}

/** Peak RSS (MB) of `node -e` reporting its own `maxRSS`: the memory floor of any node process; median of 3. */
export async function measureNodeFloorRss() {
  const floorRss = [];
  for (let index = 0; index < 3; index++) {
    const script = "process.stdout.write(String(process.resourceUsage().maxRSS))";
    const { stdout } = await timeToExit(process.execPath, ["-e", script], { env: childEnv() });
    floorRss.push((Number(stdout) * 1024) / 1e6);
  }
  return summarize(floorRss).median;
}

/** `get_chat` arguments cycling over the chats, so a mismatched answer shows as the wrong chat. */
export function getChatCall(chatIds, index) {
  const chatId = chatIds[index % chatIds.length];
  return { chatId, params: { name: "get_chat", arguments: { chatId } } };
}

/** The chat id an answer carries, or an error description. */
export function answeredChatId(message) {
  if (message.error) return `error ${message.error.code}: ${message.error.message}`;
  if (message.result?.isError) return `tool error: ${JSON.stringify(message.result.content).slice(0, 200)}`;
  return message.result?.structuredContent?.id;
}

/**
 * The direct baseline: an in-process SDK v2 client on streamable HTTP (bearer `token` when given), legacy
 * (`initialize`) or pinned to 2026-07-28.
 */
export async function connectDirectClient(mcpUrl, token, era = "legacy") {
  const versionNegotiation = era === "modern" ? { mode: { pin: "2026-07-28" } } : { mode: "legacy" };
  const client = new Client(
    { name: "chat-mcp-bridge-bench-direct", version: "1.0.0" },
    { versionNegotiation },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : undefined,
      // The SDK hands every fetch its one long-lived AbortSignal; undici keeps a listener on it per request until
      // GC, which warns and grows past 1,500 calls in flight. The baseline goes without it.
      fetch: (url, init) => fetch(url, { ...init, signal: undefined }),
    }),
  );
  if (client.getProtocolEra() !== era) {
    throw new Error(`the direct client landed on the ${client.getProtocolEra()} era, not ${era}`);
  }
  return client;
}

/**
 * Figure 2 in one era: sequential `tools/call get_chat` through every relay and the direct client, one call each in
 * a rotating order, so all see the same machine load. `eraCounts()` (the modern fixture's per-era request counts)
 * checks which era each relay spoke upstream; a relay that spoke another era is reported, not timed.
 */
export async function measureRelayOverhead({
  relays,
  mcpUrl,
  token,
  chatIds,
  calls,
  warmup,
  era,
  eraCounts,
}) {
  const direct = await connectDirectClient(mcpUrl, token, era);
  const running = [];
  const notInEra = {};
  let wrong = 0;
  let callIndex = 0;
  try {
    for (const relay of relays) {
      const started = spawnRelay(relay);
      running.push(started);
      await initializeRelay(started);
      if (eraCounts) {
        const before = await eraCounts();
        const answer = await started.rpc.request("tools/call", getChatCall(chatIds, 0).params);
        const after = await eraCounts();
        const spoke = after.modern > before.modern && after.legacy === before.legacy ? "modern" : "legacy";
        if (answeredChatId(answer) !== chatIds[0])
          throw new Error(`${relay.name}: ${answeredChatId(answer)}`);
        if (spoke !== era) notInEra[relay.name] = `spoke ${spoke} to the server`;
      }
    }
    const timedRelays = running.filter((relay) => !notInEra[relay.name]);
    const callers = [
      {
        name: "direct",
        call: async () => {
          const { chatId, params } = getChatCall(chatIds, callIndex++);
          const result = await direct.callTool(params);
          if (answeredChatId({ result }) !== chatId) wrong++;
        },
      },
      ...timedRelays.map((relay) => ({
        name: relay.name,
        call: async () => {
          const { chatId, params } = getChatCall(chatIds, callIndex++);
          const answer = await relay.rpc.request("tools/call", params);
          if (answeredChatId(answer) !== chatId) wrong++;
        },
      })),
    ];
    const samples = Object.fromEntries(callers.map((caller) => [caller.name, []]));
    for (let round = 0; round < warmup + calls; round++) {
      for (const caller of rotated(callers, round)) {
        const started = nowMs();
        await caller.call();
        if (round >= warmup) samples[caller.name].push(nowMs() - started);
      }
    }
    if (wrong > 0) throw new Error(`${wrong} calls answered with the wrong chat or an error`);
    // An ordinary session: initialize, tools/list and these few hundred calls one after another; its peak RSS is
    // what the host's machine gives the relay for a day's use.
    const sessionCalls = 1 + warmup + calls;
    return {
      era,
      directMs: summarize(samples.direct),
      relays: Object.fromEntries(timedRelays.map((relay) => [relay.name, summarize(samples[relay.name])])),
      session: {
        calls: sessionCalls,
        peakRssMB: Object.fromEntries(
          timedRelays.map((relay) => [relay.name, mibToMB(readMemory(relay.child.pid)?.peakRssMiB)]),
        ),
      },
      notInEra,
    };
  } finally {
    await direct.close();
    await Promise.all(running.map(stopRelay));
  }
}

/**
 * Figure 3: waves of `concurrency` calls written at once to each relay's stdin, relays (and the direct client)
 * taking turns wave by wave: the proof that nothing is lost (every call answered with its own chat, none twice);
 * calls/s, peak RSS (VmHWM) and RSS after the first and last wave are shown, not targets.
 */
export async function measureConcurrency({ relays, mcpUrl, token, chatIds, concurrency, waves }) {
  const running = [];
  const direct = await connectDirectClient(mcpUrl, token);
  const results = {};
  try {
    for (const relay of relays) {
      const started = spawnRelay(relay);
      running.push(started);
      await initializeRelay(started);
      results[relay.name] = { waveMs: [], answered: 0, failed: 0, mismatched: 0, failures: new Set() };
    }
    results.direct = { waveMs: [], answered: 0, failed: 0, mismatched: 0, failures: new Set() };
    let callIndex = 0;
    for (let wave = 0; wave < waves; wave++) {
      for (const target of rotated([undefined, ...running], wave)) {
        const result = results[target ? target.name : "direct"];
        const calls = Array.from({ length: concurrency }, () => getChatCall(chatIds, callIndex++));
        const started = nowMs();
        const answers = target
          ? await Promise.all(
              target.rpc.requestMany(calls.map(({ params }) => ({ method: "tools/call", params }))),
            )
          : await Promise.all(
              calls.map(({ params }) =>
                direct
                  .callTool(params, { timeout: 120_000 })
                  .then((answer) => ({ result: answer }))
                  .catch((error) => ({ error: { code: "thrown", message: String(error.cause ?? error) } })),
              ),
            );
        result.waveMs.push(nowMs() - started);
        answers.forEach((answer, index) => {
          result.answered++;
          const got = answeredChatId(answer);
          if (got === calls[index].chatId) return;
          if (typeof got === "string" && got.startsWith("chat_")) result.mismatched++;
          else {
            result.failed++;
            if (result.failures.size < 3) result.failures.add(String(got).slice(0, 200));
          }
        });
        if (target && wave === 0) result.afterFirstWave = readMemory(target.child.pid);
      }
    }
    // A second answer to a call would come after its first: give it a moment (bounded) before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const target of running) {
      results[target.name].afterLastWave = readMemory(target.child.pid);
      results[target.name].answeredTwice = target.rpc.answeredTwice;
    }
  } finally {
    await direct.close();
    await Promise.all(running.map(stopRelay));
  }
  const sent = concurrency * waves;
  return {
    concurrency,
    sent,
    nodeFloorRssMB: await measureNodeFloorRss(),
    relays: Object.fromEntries(
      Object.entries(results).map(([name, result]) => {
        const totalMs = result.waveMs.reduce((sum, ms) => sum + ms, 0);
        return [
          name,
          {
            answered: result.answered,
            failed: result.failed,
            mismatched: result.mismatched,
            answeredTwice: result.answeredTwice ?? 0,
            failures: [...result.failures],
            callsPerSecond: sent / (totalMs / 1000),
            waveMs: summarize(result.waveMs),
            rssAfterFirstWaveMB: mibToMB(result.afterFirstWave?.rssMiB),
            rssAfterLastWaveMB: mibToMB(result.afterLastWave?.rssMiB),
            peakRssMB: mibToMB(result.afterLastWave?.peakRssMiB),
          },
        ];
      }),
    ),
  };
}
