/**
 * The memory profile behind figure 3: our bridge under 1,000 calls in flight, with the peak of each part of
 * process.memoryUsage() and two heap snapshots (idle after a warm-up wave, and mid-wave) whose difference shows which
 * objects the in-flight calls hold.
 */
import { mkdtempSync, readdirSync, readlinkSync, rmSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { heapByKind, heapGrowth } from "../lib/heap-snapshot.mjs";
import { readMemory } from "../lib/processes.mjs";
import { initializeRelay, spawnRelay, stopRelay } from "../lib/relays.mjs";
import { getChatCall, mibToMB } from "./relays.mjs";

const probe = fileURLToPath(new URL("../lib/memory-probe.mjs", import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until `dir` holds `count` heap snapshots and the newest has stopped growing. */
async function snapshotsWritten(dir, count) {
  let lastSize = -1;
  for (let attempt = 0; attempt < 300; attempt++) {
    const files = readdirSync(dir)
      .filter((name) => name.endsWith(".heapsnapshot"))
      .sort();
    if (files.length >= count) {
      const size = statSync(join(dir, files[count - 1])).size;
      if (size > 0 && size === lastSize) return files.map((name) => join(dir, name));
      lastSize = size;
    }
    await sleep(200);
  }
  throw new Error(`no heap snapshot ${count} in ${dir} after 60 s`);
}

/** Open file descriptors of `pid` that are sockets (each TCP connection is one), or NaN without /proc. */
function socketCount(pid) {
  try {
    return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
      } catch {
        return false;
      }
    }).length;
  } catch {
    return Number.NaN;
  }
}

/** Sends waves of `concurrency` calls on `running`; `onAnswer(count)` after each answer of the last wave. */
function waves(running, chatIds, concurrency) {
  let callIndex = 0;
  return (onAnswer) => {
    const calls = Array.from({ length: concurrency }, () => getChatCall(chatIds, callIndex++));
    const answers = running.rpc.requestMany(calls.map(({ params }) => ({ method: "tools/call", params })));
    let answered = 0;
    if (onAnswer) for (const answer of answers) answer.then(() => onAnswer(++answered));
    return Promise.all(answers);
  };
}

/**
 * Runs the profile on `relay` (our bridge), two processes: one with only the memoryUsage() probe (clean peaks, and
 * the sockets open with a tenth of a wave answered), one with two heap snapshots (idle after a warm-up wave, and
 * with a tenth of a wave answered: every call sent, most still pending).
 */
export async function profileMemory({ relay, chatIds, concurrency }) {
  const dir = mkdtempSync(join(os.tmpdir(), "chat-mcp-bridge-bench-heap-"));
  const probeOut = join(dir, "peak.json");
  const tenth = Math.ceil(concurrency / 10);
  try {
    const probed = spawnRelay(relay, ["--import", probe], { BENCH_MEMORY_PROBE_OUT: probeOut });
    let sockets = Number.NaN;
    let rssIdleMB;
    let peakRssMB;
    try {
      await initializeRelay(probed);
      const wave = waves(probed, chatIds, concurrency);
      await wave();
      rssIdleMB = mibToMB(readMemory(probed.child.pid)?.rssMiB);
      await wave((answered) => {
        if (answered === tenth) sockets = socketCount(probed.child.pid);
      });
      peakRssMB = mibToMB(readMemory(probed.child.pid)?.peakRssMiB);
    } finally {
      await stopRelay(probed);
    }
    const peak = JSON.parse(await readFile(probeOut, "utf8"));

    const snapshotted = spawnRelay(relay, ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`]);
    try {
      await initializeRelay(snapshotted);
      const wave = waves(snapshotted, chatIds, concurrency);
      await wave();
      snapshotted.child.kill("SIGUSR2");
      await snapshotsWritten(dir, 1);
      await wave((answered) => {
        if (answered === tenth) snapshotted.child.kill("SIGUSR2");
      });
      await snapshotsWritten(dir, 2);
    } finally {
      await stopRelay(snapshotted);
    }
    const [idleFile, busyFile] = readdirSync(dir)
      .filter((name) => name.endsWith(".heapsnapshot"))
      .sort()
      .map((name) => join(dir, name));
    const idle = heapByKind(idleFile);
    const busy = heapByKind(busyFile);
    const total = (kinds) => [...kinds.values()].reduce((sum, entry) => sum + entry.bytes, 0);
    return {
      relay: relay.name,
      concurrency,
      rssIdleMB,
      peakRssMB,
      socketsMidWave: sockets,
      peakOfMemoryUsageMB: Object.fromEntries(Object.entries(peak).map(([key, bytes]) => [key, bytes / 1e6])),
      heapIdleMB: total(idle) / 1e6,
      heapMidWaveMB: total(busy) / 1e6,
      heapGrowthTop: heapGrowth(idle, busy).map((row) => ({ ...row, mb: row.bytes / 1e6 })),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The profile as text for the terminal and the closing note. */
export function formatMemoryProfile(profile) {
  const lines = [
    `memory profile: ${profile.relay}, ${profile.concurrency} calls in flight`,
    `  RSS after a warm-up wave ${profile.rssIdleMB.toFixed(1)} MB, peak ${profile.peakRssMB.toFixed(1)} MB; ` +
      `${profile.socketsMidWave} sockets open with a tenth of the wave answered; peaks of process.memoryUsage(): ` +
      Object.entries(profile.peakOfMemoryUsageMB)
        .map(([key, mb]) => `${key} ${mb.toFixed(1)} MB`)
        .join(", "),
    `  V8 heap, live objects (snapshots, after a GC) idle ${profile.heapIdleMB.toFixed(1)} MB, mid-wave ${profile.heapMidWaveMB.toFixed(1)} MB; grew most with the wave in flight:`,
    ...profile.heapGrowthTop.map(
      (row) =>
        `    ${row.mb >= 0 ? "+" : ""}${row.mb.toFixed(2).padStart(7)} MB ${String(row.count).padStart(8)} x ${row.label.slice(0, 90)}`,
    ),
  ];
  return lines.join("\n");
}
