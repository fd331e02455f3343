/**
 * Figure 10: what DPoP costs our bridge. Two 2025-era reference servers, one with DPoP off and one that requires it,
 * each with its own chats and its own bridge login; sequential `tools/call get_chat` through each bridge in turn
 * (relay p50), then waves of calls in flight through each in turn (load). Every DPoP request signs a fresh proof
 * (ES256) and the server checks it.
 */
import { join } from "node:path";
import { initializeRelay, OURS, relaysFor, spawnRelay, stopRelay } from "../lib/relays.mjs";
import { row } from "../lib/report.mjs";
import { benchDir, seedChats, signInBridge, startServerChild } from "../lib/setup.mjs";
import { nowMs, summarize } from "../lib/stats.mjs";
import { answeredChatId, getChatCall } from "./relays.mjs";

const MODES = ["off", "required"];

export async function measureDpop({ configDir, chats, calls, warmup, concurrency, waves }) {
  const parties = [];
  try {
    for (const mode of MODES) {
      const server = await startServerChild(join(benchDir, "server-child.mjs"), [
        "--mcp-era=legacy",
        `--dpop=${mode}`,
      ]);
      const dir = join(configDir, `dpop-${mode}`);
      const party = { mode, server, chatIds: await seedChats(server, chats) };
      parties.push(party);
      await signInBridge(server, dir);
      party.relay = spawnRelay(
        relaysFor({ mcpUrl: server.mcpUrl, configDir: dir }).find((relay) => relay.name === OURS),
      );
      await initializeRelay(party.relay);
    }
    let wrong = 0;
    const call = async (party, index) => {
      const { chatId, params } = getChatCall(party.chatIds, index);
      if (answeredChatId(await party.relay.rpc.request("tools/call", params)) !== chatId) wrong++;
    };
    const sequential = Object.fromEntries(MODES.map((mode) => [mode, []]));
    for (let round = 0; round < warmup + calls; round++) {
      for (const party of round % 2 ? [...parties].reverse() : parties) {
        const started = nowMs();
        await call(party, round);
        if (round >= warmup) sequential[party.mode].push(nowMs() - started);
      }
    }
    const waveMs = Object.fromEntries(MODES.map((mode) => [mode, []]));
    for (let wave = 0; wave < waves; wave++) {
      for (const party of wave % 2 ? [...parties].reverse() : parties) {
        const batch = Array.from({ length: concurrency }, (_, index) => getChatCall(party.chatIds, index));
        const started = nowMs();
        const answers = await Promise.all(
          party.relay.rpc.requestMany(batch.map(({ params }) => ({ method: "tools/call", params }))),
        );
        waveMs[party.mode].push(nowMs() - started);
        wrong += answers.filter((answer, index) => answeredChatId(answer) !== batch[index].chatId).length;
      }
    }
    if (wrong > 0) throw new Error(`${wrong} calls answered with the wrong chat or an error`);
    const perSecond = (mode) =>
      (concurrency * waves) / (waveMs[mode].reduce((sum, ms) => sum + ms, 0) / 1000);
    return {
      relayMs: Object.fromEntries(MODES.map((mode) => [mode, summarize(sequential[mode])])),
      callsPerSecond: Object.fromEntries(MODES.map((mode) => [mode, perSecond(mode)])),
      concurrency,
      waves,
    };
  } finally {
    for (const party of parties) {
      if (party.relay) await stopRelay(party.relay);
      await party.server.stop();
    }
  }
}

/** Its rows: DPoP on, with DPoP off (same run, same machine load) as the baseline. */
export function dpopRows(dpop) {
  return [
    row(
      "10 DPoP",
      `relay p50, DPoP on (n=${dpop.relayMs.required.n})`,
      "ms",
      dpop.relayMs.required.median,
      dpop.relayMs.off.median,
      "DPoP off",
    ),
    row("10 DPoP", `relay p99, DPoP on`, "ms", dpop.relayMs.required.p99, dpop.relayMs.off.p99, "DPoP off"),
    row(
      "10 DPoP",
      `${dpop.concurrency} in flight x ${dpop.waves} waves, DPoP on`,
      "calls/s",
      dpop.callsPerSecond.required,
      dpop.callsPerSecond.off,
      "DPoP off",
    ),
  ];
}
