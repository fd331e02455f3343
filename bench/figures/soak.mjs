/**
 * Figure 8, the soak: our bridge under steady load against a reference server whose access tokens expire every
 * 2 s, so the bridge refreshes its token continuously; RSS sampled every second. A 24 h session on a 1 h token
 * refreshes 24 times; `seconds` / 2 refreshes compress that (60 s is 30 refreshes) and the number of calls in
 * flight keeps the relay busy the whole time. "Flat once warm": the median RSS of the last quarter over that of
 * the second quarter (the first quarter is warm-up).
 */
import { join } from "node:path";
import { readMemory } from "../lib/processes.mjs";
import { initializeRelay, relaysFor, spawnRelay, stopRelay } from "../lib/relays.mjs";
import { benchDir, seedChats, signInBridge, startServerChild } from "../lib/setup.mjs";
import { nowMs, summarize } from "../lib/stats.mjs";
import { answeredChatId, getChatCall, mibToMB } from "./relays.mjs";

export const SOAK_TOKEN_TTL_SECONDS = 2;

export async function measureSoak({ configDir, seconds, inFlight }) {
  const server = await startServerChild(join(benchDir, "server-child.mjs"), [
    `--access-token-ttl=${SOAK_TOKEN_TTL_SECONDS}`,
  ]);
  try {
    const chatIds = await seedChats(server, 3);
    await signInBridge(server, configDir);
    const [ours] = relaysFor({ mcpUrl: server.mcpUrl, configDir });
    const running = spawnRelay(ours);
    const rssMB = [];
    let answered = 0;
    let failed = 0;
    const failures = new Set();
    try {
      await initializeRelay(running);
      const endAt = nowMs() + seconds * 1000;
      let callIndex = 0;
      const sampler = setInterval(() => rssMB.push(mibToMB(readMemory(running.child.pid)?.rssMiB)), 1000);
      const worker = async () => {
        while (nowMs() < endAt) {
          const { chatId, params } = getChatCall(chatIds, callIndex++);
          const answer = await running.rpc.request("tools/call", params);
          answered++;
          const got = answeredChatId(answer);
          if (got !== chatId) {
            failed++;
            if (failures.size < 3) failures.add(String(got).slice(0, 200));
          }
        }
      };
      await Promise.all(Array.from({ length: inFlight }, worker));
      clearInterval(sampler);
    } finally {
      await stopRelay(running);
    }
    const quarter = Math.max(1, Math.floor(rssMB.length / 4));
    const warm = summarize(rssMB.slice(quarter, 2 * quarter)).median;
    const last = summarize(rssMB.slice(-quarter)).median;
    return {
      seconds,
      inFlight,
      tokenTtlSeconds: SOAK_TOKEN_TTL_SECONDS,
      tokenLifetimes: Math.floor(seconds / SOAK_TOKEN_TTL_SECONDS),
      answered,
      failed,
      failures: [...failures],
      rssMB,
      warmRssMB: warm,
      lastRssMB: last,
      peakRssMB: Math.max(...rssMB),
    };
  } finally {
    await server.stop();
  }
}
