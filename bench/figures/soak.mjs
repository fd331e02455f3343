/**
 * Figure 8, the soak: our bridge under steady load against a reference server whose access tokens expire every
 * 2 s, so the bridge refreshes its token continuously; RSS sampled every second. A 24 h session on a 1 h token
 * refreshes 24 times; `seconds` / 2 refreshes compress that (120 s is 60) and the calls in flight keep the relay
 * busy the whole time. "Flat once warm": the first third is warm-up (under load the heap takes most of a minute
 * to reach its working size); the peak RSS of the last third over the peak of the middle third. Peaks rather than
 * medians, because RSS is a garbage-collection sawtooth and a median depends on where in it a window falls.
 */
import { join } from "node:path";
import { readMemory } from "../lib/processes.mjs";
import { initializeRelay, relaysFor, spawnRelay, stopRelay } from "../lib/relays.mjs";
import { benchDir, seedChats, signInBridge, startServerChild } from "../lib/setup.mjs";
import { nowMs } from "../lib/stats.mjs";
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
    const third = Math.max(1, Math.floor(rssMB.length / 3));
    const warm = Math.max(...rssMB.slice(third, 2 * third));
    const last = Math.max(...rssMB.slice(2 * third));
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
