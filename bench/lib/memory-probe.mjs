/**
 * Loaded into a relay with `node --import` (bench only): samples process.memoryUsage() every 10 ms and writes the
 * peak of each part (rss, heapTotal, heapUsed, external, arrayBuffers, and rss - heapTotal - external: memory
 * outside V8's heap such as sockets, parsers and code; in bytes) to $BENCH_MEMORY_PROBE_OUT at exit.
 */
import { writeFileSync } from "node:fs";

const out = process.env.BENCH_MEMORY_PROBE_OUT;
if (out) {
  const peak = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0, outsideHeap: 0 };
  const sample = () => {
    const usage = process.memoryUsage();
    usage.outsideHeap = usage.rss - usage.heapTotal - usage.external;
    for (const key of Object.keys(peak)) peak[key] = Math.max(peak[key], usage[key]);
  };
  setInterval(sample, 10).unref();
  process.on("exit", () => {
    sample();
    writeFileSync(out, JSON.stringify(peak));
  });
}
