/** The relay process's V8 heap tuning: a young generation that keeps its initial size. */
import { setFlagsFromString } from "node:v8";

/**
 * A relay's garbage is short-lived messages, yet with many calls in flight they survive a scavenge or two, and
 * V8 then grows the young generation (its semi-spaces) to 32 MB on Node 20 and 128 MB on Node 24: RSS the process
 * keeps. Held at its initial size, scavenges stay cheap and the peak stays low. A flag V8 reads each time it
 * would grow the semi-spaces, so setting it at start (before the heap grew) is enough; `--max-semi-space-size`
 * is read only when the heap is created, too late from here.
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString("--semi-space-growth-factor=1");
}
