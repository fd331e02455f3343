/** The relay process's V8 tuning: a young generation that keeps its initial size, an old one that grows slowly. */
import { setFlagsFromString } from "node:v8";

/**
 * A relay's garbage is short-lived messages, yet with many calls in flight they survive a scavenge or two, and
 * V8 then grows the young generation (its semi-spaces) to 32 MB on Node 20 and 128 MB on Node 24: RSS the process
 * keeps. Held at its initial size, scavenges stay cheap and the peak stays low. A flag V8 reads each time it
 * would grow the semi-spaces, so setting it at start (before the heap grew) is enough; `--max-semi-space-size`
 * is read only when the heap is created, too late from here.
 *
 * What those scavenges promote dies soon after (a call's promises and closures, alive while it is in flight), so the
 * old generation is mostly garbage at its peak: 11 MB live of 35 MB used with 1,000 calls in flight. Its next limit
 * is set after each full collection as live size times a factor V8 picks between 1.1 and 4 by how fast the heap
 * grows; `--heap-growing-percent=10` fixes it at 1.1 (read at each collection, so it also works from here). Peak RSS
 * with 1,000 in flight on Node 20: 84.7 -> 77-79 MB, calls/s within the run-to-run noise.
 *
 * Node 22+ also compiles warm functions with Maglev, a tier between the baseline code and TurboFan whose code and
 * compile zones live outside the heap: off, peak RSS under the same load on Node 24 went 92-106 -> 84 MB, calls/s
 * 1.54-1.83x the best peer as before (hot code still reaches TurboFan). Node 20 has Maglev off already.
 */
export function tuneRelayHeap(): void {
  setFlagsFromString("--semi-space-growth-factor=1");
  setFlagsFromString("--heap-growing-percent=10");
  setFlagsFromString("--no-maglev");
}
