/** The reconnect window both upstreams share: its length before and after first contact, and its back-off. */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RECONNECT_WINDOW_MS,
  FIRST_CONTACT_WINDOW_MS,
  FIRST_RETRY_DELAY_MS,
  MAX_RETRY_DELAY_MS,
  nextRetryDelay,
  reconnectWindowMs,
} from "../../../src/bridge/upstream/http/time-outs.js";

describe("the reconnect window", () => {
  it("is the configured length once the server was reached, the default when none is configured", () => {
    expect(reconnectWindowMs(12_000, false)).toBe(12_000);
    expect(reconnectWindowMs(undefined, false)).toBe(DEFAULT_RECONNECT_WINDOW_MS);
  });

  it("is at most the first-contact length before the server ever answered", () => {
    expect(reconnectWindowMs(undefined, true)).toBe(FIRST_CONTACT_WINDOW_MS);
    expect(reconnectWindowMs(1000, true)).toBe(1000);
    expect(FIRST_CONTACT_WINDOW_MS).toBeLessThan(DEFAULT_RECONNECT_WINDOW_MS);
  });

  it("doubles the wait between tries up to its bound", () => {
    const waits = [FIRST_RETRY_DELAY_MS];
    while (waits.length < 10) waits.push(nextRetryDelay(waits.at(-1)!));
    expect(waits.slice(0, 4)).toEqual([200, 400, 800, 1600]);
    expect(Math.max(...waits)).toBe(MAX_RETRY_DELAY_MS);
  });
});
