/**
 * Long calls as hosts run them, scaled down: a host that times a request out unless progress resets its timer,
 * through the spawned bridge, against a reference server whose assistant takes longer than that time-out, in each
 * era pair; a host that cancels a call part-way. Scaled, this proves what the SDKs' 60 s default and a 70 s
 * assistant would (the reference server's progress comes every quarter of the assistant's time, at most 5 s).
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  describeFigures,
  type HostMode,
  runLongCalls,
  type SlowServer,
  startSlowServer,
} from "./long-call-pairs.js";

/**
 * The host's patience (the SDKs' 60 s, scaled down by ten), the assistant's time, longer, and the host's cancel:
 * 7.5 s before the assistant would write, room for the cancellation to cross three processes on a loaded machine.
 * Progress comes every 2.25 s (a quarter of the assistant's time), so a late one still lands inside the 6 s; with a
 * 3 s patience the 2026-07-28 and auto hosts timed out beside a load of 30 on two cores.
 */
const TIMINGS = { hostTimeoutMs: 6000, assistantMs: 9000, cancelAtMs: 1500 };
const HOSTS: readonly HostMode[] = ["legacy", "modern", "auto"];

describe.concurrent.each(["legacy", "modern"] as const)("a reference server serving the %s era", (mcpEra) => {
  let slow: SlowServer;
  beforeAll(async () => {
    slow = await startSlowServer(mcpEra, HOSTS, TIMINGS.assistantMs);
  });
  afterAll(async () => {
    await slow?.close();
  });

  it.each(HOSTS)(
    "the %s host: create_chat, send_message and resolve_task outlast its time-out on progress; each ran once, the cancelled call not at all",
    async (host) => {
      const figures = await runLongCalls(slow, mcpEra, host, TIMINGS);
      console.log(describeFigures(`${host} host, ${mcpEra} server`, figures));
    },
    60_000,
  );
});
