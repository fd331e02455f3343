/** The DPoP replay ledger at its real limits (src/server/oauth/dpop.ts): per key, full of live proofs it refuses that key, it never forgets one still acceptable. */
import { describe, expect, it } from "vitest";
import { DEFAULT_DPOP_REPLAY_LIMITS, DpopReplayLedger } from "../../../src/server/oauth/dpop.js";

const NOW = 1_000_000;
const live = NOW + 360;

describe("DpopReplayLedger with the default limits", () => {
  it("takes a key's 20 000 live proofs, then refuses the key (not the others) and still knows the first", () => {
    const ledger = new DpopReplayLedger();
    const { perKey } = DEFAULT_DPOP_REPLAY_LIMITS;
    for (let i = 0; i < perKey; i++) {
      expect(ledger.room("victim", NOW)).toBeUndefined();
      ledger.remember("victim", `jti-${i}`, live);
    }
    expect(ledger.room("victim", NOW)).toEqual({ retryAfterSeconds: 360 });
    expect(ledger.used("victim", "jti-0")).toBe(true);
    expect(ledger.room("other", NOW)).toBeUndefined();
    // Once their iat window has passed, the key's proofs can go: they can no longer be accepted anyway.
    expect(ledger.room("victim", NOW + 360)).toBeUndefined();
    expect(ledger.used("victim", "jti-0")).toBe(false);
  });

  it("ten keys full of live proofs cost an eleventh key nothing, and none is forgotten", () => {
    const ledger = new DpopReplayLedger();
    const { perKey } = DEFAULT_DPOP_REPLAY_LIMITS;
    for (let key = 0; key < 10; key++) {
      for (let i = 0; i < perKey; i++) ledger.remember(`key-${key}`, `jti-${i}`, live);
    }
    expect(ledger.room("newcomer", NOW)).toBeUndefined();
    expect(ledger.used("key-0", "jti-0")).toBe(true);
    expect(ledger.used("key-9", `jti-${perKey - 1}`)).toBe(true);
  });

  it("drops a released reservation; an aged-out entry behind a live one goes once the live one does", () => {
    const ledger = new DpopReplayLedger({ perKey: 4 });
    ledger.remember("k", "late", NOW + 100);
    ledger.remember("k", "early", NOW + 10);
    ledger.remember("k", "bare", live);
    ledger.forget("k", "bare");
    expect(ledger.used("k", "bare")).toBe(false);
    ledger.room("k", NOW + 50);
    expect([ledger.used("k", "late"), ledger.used("k", "early")]).toEqual([true, true]);
    ledger.room("k", NOW + 100);
    expect([ledger.used("k", "late"), ledger.used("k", "early")]).toEqual([false, false]);
  });
});
