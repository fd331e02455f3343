/**
 * Issue 42's own check, in real time: SDK v2 hosts (the default 2025 handshake, and `auto`) that time a request out
 * after 60 s unless progress resets the timer, through the spawned bridge, against a reference server whose
 * assistant takes 70 s, in each era pair; each host also cancels a `create_chat` at 30 s. The pairs run at once,
 * so the file takes about as long as one call.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  describeFigures,
  type HostMode,
  runLongCalls,
  type SlowServer,
  startSlowServer,
} from "./long-call-pairs.js";

/** The SDKs' default request time-out, an assistant slower than it, and a person who gives up half-way. */
const TIMINGS = { hostTimeoutMs: 60_000, assistantMs: 70_000, cancelAtMs: 30_000 };
const HOSTS: readonly HostMode[] = ["legacy", "auto"];

describe.concurrent.each(["legacy", "modern"] as const)("a reference server serving the %s era", (mcpEra) => {
  let slow: SlowServer;
  beforeAll(async () => {
    slow = await startSlowServer(mcpEra, HOSTS, TIMINGS.assistantMs);
  });
  afterAll(async () => {
    await slow?.close();
  });

  it.each(HOSTS)(
    "the %s host: create_chat, send_message and resolve_task complete after 70 s on progress; the call cancelled at 30 s never ran",
    async (host) => {
      const figures = await runLongCalls(slow, mcpEra, host, TIMINGS);
      console.log(describeFigures(`${host} host, ${mcpEra} server`, figures));
    },
    150_000,
  );
});
