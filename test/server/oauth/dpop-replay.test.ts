/** The DPoP replay ledger at its real limits (src/server/oauth/dpop-replay.ts): full of live proofs it refuses, it never forgets one still acceptable. */
import { describe, expect, it } from "vitest";
import { DEFAULT_DPOP_REPLAY_LIMITS, DpopReplayLedger } from "../../../src/server/oauth/dpop-replay.js";

const NOW = 1_000_000;
const live = { forgetAt: NOW + 360, nonceGeneration: undefined };

describe("DpopReplayLedger with the default limits", () => {
  it("takes a key's 20 000 live proofs, then refuses the key (not the others) and still knows the first", () => {
    const ledger = new DpopReplayLedger();
    const { perKey } = DEFAULT_DPOP_REPLAY_LIMITS;
    for (let i = 0; i < perKey; i++) {
      expect(ledger.room("victim", NOW)).toBeUndefined();
      ledger.remember("victim", `jti-${i}`, live);
    }
    expect(ledger.room("victim", NOW)).toEqual({ full: "key", retryAfterSeconds: 360 });
    expect(ledger.used("victim", "jti-0")).toBe(true);
    expect(ledger.room("other", NOW)).toBeUndefined();
    // Once their iat window has passed, the key's proofs can go: they can no longer be accepted anyway.
    expect(ledger.room("victim", NOW + 360)).toBeUndefined();
    expect(ledger.used("victim", "jti-0")).toBe(false);
  });

  it("full across keys (200 000 live proofs), refuses every key and forgets none", () => {
    const ledger = new DpopReplayLedger();
    const { perKey, total } = DEFAULT_DPOP_REPLAY_LIMITS;
    for (let key = 0; key < total / perKey; key++) {
      for (let i = 0; i < perKey; i++) ledger.remember(`key-${key}`, `jti-${i}`, live);
    }
    expect(ledger.size).toBe(total);
    expect(ledger.room("newcomer", NOW)).toEqual({ full: "server", retryAfterSeconds: 1 });
    expect(ledger.used("key-0", "jti-0")).toBe(true);
    expect(ledger.size).toBe(total);
  });

  it("drops the entries of retired nonces only, and a released reservation", () => {
    const ledger = new DpopReplayLedger({ perKey: 4, total: 8 });
    ledger.remember("k", "old", { forgetAt: NOW + 360, nonceGeneration: 1 });
    ledger.remember("k", "current", { forgetAt: NOW + 360, nonceGeneration: 3 });
    ledger.remember("k", "bare", live);
    ledger.forgetNonceGenerationsBefore(2);
    expect([ledger.used("k", "old"), ledger.used("k", "current"), ledger.used("k", "bare")]).toEqual([
      false,
      true,
      true,
    ]);
    ledger.forget("k", "bare");
    expect(ledger.used("k", "bare")).toBe(false);
    expect(ledger.size).toBe(1);
  });
});
