/** The DPoP proofs already used (RFC 9449 §11.1), per key thumbprint: bounded per key, never forgetting one that could still be accepted. */

/** The bound on the proofs remembered per key (`jkt`). */
export interface DpopReplayLimits {
  /** Proofs of one key remembered at once (default 20 000). */
  perKey?: number;
}

export const DEFAULT_DPOP_REPLAY_LIMITS: Required<DpopReplayLimits> = { perKey: 20_000 };

/** Why a proof cannot be remembered now: its key is full of proofs still acceptable, free again after the wait. */
export type LedgerFull = { retryAfterSeconds: number };

/**
 * Used proofs by key, each key's in the order they were used. An entry goes only when its proof can no longer be
 * accepted (its `iat` left the window: `forgetAt`, in seconds). A key full of live entries is refused until its
 * oldest ages out: a flood of fresh proofs costs that key a wait, never another key anything, and never makes the
 * ledger forget. There is no bound across keys: each entry is a request that passed the per-credential rate limit,
 * and it is gone within the proof window.
 */
export class DpopReplayLedger {
  readonly #perKey: number;
  readonly #byKey = new Map<string, Map<string, number>>();

  constructor(limits: DpopReplayLimits = {}) {
    this.#perKey = limits.perKey ?? DEFAULT_DPOP_REPLAY_LIMITS.perKey;
    if (!(this.#perKey >= 1)) throw new RangeError("dpopReplayLimits needs perKey >= 1");
  }

  used(jkt: string, jti: string): boolean {
    return this.#byKey.get(jkt)?.has(jti) ?? false;
  }

  /** Undefined when one more proof of `jkt` can be remembered, after dropping the key's entries no longer live. */
  room(jkt: string, nowSeconds: number): LedgerFull | undefined {
    const proofs = this.#byKey.get(jkt);
    if (!proofs) return undefined;
    // Kept in the order used, so the aged-out ones are mostly at the front; one behind a live one stays at most a
    // window longer (kept too long, never too short).
    for (const [jti, forgetAt] of proofs) {
      if (forgetAt > nowSeconds) break;
      proofs.delete(jti);
    }
    if (proofs.size === 0) this.#byKey.delete(jkt);
    if (proofs.size < this.#perKey) return undefined;
    const oldest = proofs.values().next().value ?? nowSeconds;
    return { retryAfterSeconds: Math.max(1, Math.ceil(oldest - nowSeconds)) };
  }

  /** Remembers a proof until `forgetAt`; call `room` first in the same turn of the event loop. */
  remember(jkt: string, jti: string, forgetAt: number): void {
    let proofs = this.#byKey.get(jkt);
    if (!proofs) {
      proofs = new Map();
      this.#byKey.set(jkt, proofs);
    }
    if (!proofs.has(jti)) proofs.set(jti, forgetAt);
  }

  /** Forgets a proof remembered for a request that was then refused: it was never used, so it may be used once. */
  forget(jkt: string, jti: string): void {
    const proofs = this.#byKey.get(jkt);
    proofs?.delete(jti);
    if (proofs?.size === 0) this.#byKey.delete(jkt);
  }
}
