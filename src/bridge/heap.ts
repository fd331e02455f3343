/** The relay process's V8 tuning: a young generation held small, an old one that grows slowly, no optimizing compilers. */
import { createRequire } from "node:module";

/**
 * A relay's garbage is short-lived messages, yet with many calls in flight they survive a scavenge or two, and
 * V8 then grows the young generation (its semi-spaces) to 32 MB on Node 20 and 128 MB on Node 24: RSS the process
 * keeps. Held at its initial size, scavenges stay cheap and the peak stays low. A flag V8 reads each time it
 * would grow the semi-spaces, so setting it at run time holds the size they have then; `--max-semi-space-size`
 * is read only when the heap is created, too late from here.
 *
 * What those scavenges promote dies soon after (a call's promises and closures, alive while it is in flight), so the
 * old generation is mostly garbage at its peak: 11 MB live of 35 MB used with 1,000 calls in flight. Its next limit
 * is set after each full collection as live size times a factor V8 picks between 1.1 and 4 by how fast the heap
 * grows; `--heap-growing-percent=10` fixes it at 1.1 (read at each collection, so it also works from here). Peak RSS
 * with 1,000 in flight on Node 20: 84.7 -> 77-79 MB, calls/s within the run-to-run noise.
 *
 * A relay's time goes to I/O and to JSON.parse and JSON.stringify (native code), so its JavaScript stays on the
 * baseline tier (Ignition, then Sparkplug): the optimizing compilers, Maglev (Node 22+) and TurboFan, cost more
 * memory than they save time here, in compile zones, optimized code and the compilers' own pages of the node binary
 * faulted in. Off, peak RSS with 1,000 calls in flight went 76.4 -> 68.1 MB on Node 20 and 83.6 -> 78.9 MB on Node 24
 * (the bench), calls/s and relay p50 within the noise, a 100 kB answer's too; relay p99 within the noise on Node 20
 * and +1.8 to +2.7 ms in four A/B runs on Node 24 (-3.5 to +1.7 ms with the compilers on). Both flags are read
 * whenever V8 would tier a function up, so setting them at run time works (`--max-opt=1` set the same way did not hold
 * Node 24: 101 MB).
 *
 * The bin calls it once the relay has written its first answer (`runRelay`'s `afterFirstAnswer`), not at start:
 * `node:v8` costs a start 3-7 ms to load (Node 20 and 24), and once a flag is set Node compiles every built-in it
 * loads afterwards without its code cache, those of the first request included. Loading the bundle has grown the young
 * generation by either moment alike (2 MB on Node 20, 4 MB on Node 24, measured at both), and it stays there.
 */
export function tuneRelayV8(): void {
  const { setFlagsFromString }: typeof import("node:v8") = createRequire(import.meta.url)("node:v8");
  setFlagsFromString("--semi-space-growth-factor=1");
  setFlagsFromString("--heap-growing-percent=10");
  setFlagsFromString("--no-maglev");
  setFlagsFromString("--no-turbofan");
}
