/** The DPoP proofs already used (RFC 9449 §11.1), per key thumbprint: bounded per key and in all, never forgetting one that could still be accepted. */

/** Bounds on the proofs remembered: per key (`jkt`) and in all. */
export interface DpopReplayLimits {
  /** Proofs of one key remembered at once (default 20 000). */
  perKey?: number;
  /** Proofs remembered at once across all keys (default 200 000). */
  total?: number;
}

export const DEFAULT_DPOP_REPLAY_LIMITS: Required<DpopReplayLimits> = { perKey: 20_000, total: 200_000 };

/** A used proof: until when its `iat` keeps it acceptable (s), and the server nonce generation it carried, if any. */
interface UsedProof {
  forgetAt: number;
  nonceGeneration: number | undefined;
}

/** Why a proof cannot be remembered now: its key, or the whole ledger, is full of proofs still acceptable. */
export type LedgerFull = { full: "key" | "server"; retryAfterSeconds: number };

/** Full sweeps of every key run at most this often (s): under a flood, a sweep per request would be the attack. */
const SWEEP_INTERVAL_SECONDS = 1;

/**
 * Used proofs by key. An entry goes only when its proof can no longer be accepted: its `iat` left the window, or the
 * server nonce it carried was retired (`forgetNonceGenerationsBefore`). When a key or the ledger is full of live
 * entries, `room` says so and the caller refuses the proof (or retires the nonces): a flood of fresh proofs can make
 * the server refuse, never make it forget.
 */
export class DpopReplayLedger {
  readonly #perKey: number;
  readonly #total: number;
  readonly #byKey = new Map<string, Map<string, UsedProof>>();
  #size = 0;
  #withNonce = 0;
  #lastSweep = Number.NEGATIVE_INFINITY;

  constructor(limits: DpopReplayLimits = {}) {
    this.#perKey = limits.perKey ?? DEFAULT_DPOP_REPLAY_LIMITS.perKey;
    this.#total = limits.total ?? DEFAULT_DPOP_REPLAY_LIMITS.total;
    if (!(this.#perKey >= 1 && this.#total >= this.#perKey)) {
      throw new RangeError("dpopReplayLimits needs perKey >= 1 and total >= perKey");
    }
  }

  get size(): number {
    return this.#size;
  }

  /** Entries that carried a server nonce: what retiring the nonces would free. */
  get withNonce(): number {
    return this.#withNonce;
  }

  used(jkt: string, jti: string): boolean {
    return this.#byKey.get(jkt)?.has(jti) ?? false;
  }

  /** Undefined when one more proof of `jkt` can be remembered, after dropping the entries of that key no longer live. */
  room(jkt: string, nowSeconds: number): LedgerFull | undefined {
    const ofKey = this.#byKey.get(jkt);
    if (ofKey && ofKey.size >= this.#perKey) {
      this.#sweepKey(jkt, ofKey, nowSeconds);
      if (ofKey.size >= this.#perKey)
        return { full: "key", retryAfterSeconds: retryAfter(ofKey, nowSeconds) };
    }
    if (this.#size >= this.#total && nowSeconds - this.#lastSweep >= SWEEP_INTERVAL_SECONDS) {
      this.#lastSweep = nowSeconds;
      for (const [key, proofs] of this.#byKey) this.#sweepKey(key, proofs, nowSeconds);
    }
    if (this.#size >= this.#total) return { full: "server", retryAfterSeconds: SWEEP_INTERVAL_SECONDS };
    return undefined;
  }

  /** Remembers a proof; call `room` first in the same turn of the event loop (this never drops a live entry). */
  remember(jkt: string, jti: string, used: UsedProof): void {
    let ofKey = this.#byKey.get(jkt);
    if (!ofKey) {
      ofKey = new Map();
      this.#byKey.set(jkt, ofKey);
    }
    if (ofKey.has(jti)) return;
    ofKey.set(jti, used);
    this.#size += 1;
    if (used.nonceGeneration !== undefined) this.#withNonce += 1;
  }

  /** Forgets a proof remembered for a request that was then refused: it was never used, so it may be used once. */
  forget(jkt: string, jti: string): void {
    const proofs = this.#byKey.get(jkt);
    const used = proofs?.get(jti);
    if (!proofs || !used) return;
    this.#drop(proofs, jti, used);
    if (proofs.size === 0) this.#byKey.delete(jkt);
  }

  /** Drops every entry whose nonce generation is below `generation`: the server no longer accepts those nonces. */
  forgetNonceGenerationsBefore(generation: number): void {
    for (const [jkt, proofs] of this.#byKey) {
      for (const [jti, used] of proofs) {
        if (used.nonceGeneration !== undefined && used.nonceGeneration < generation)
          this.#drop(proofs, jti, used);
      }
      if (proofs.size === 0) this.#byKey.delete(jkt);
    }
  }

  #sweepKey(jkt: string, proofs: Map<string, UsedProof>, nowSeconds: number): void {
    for (const [jti, used] of proofs) if (used.forgetAt <= nowSeconds) this.#drop(proofs, jti, used);
    if (proofs.size === 0) this.#byKey.delete(jkt);
  }

  #drop(proofs: Map<string, UsedProof>, jti: string, used: UsedProof): void {
    proofs.delete(jti);
    this.#size -= 1;
    if (used.nonceGeneration !== undefined) this.#withNonce -= 1;
  }
}

/** Seconds until the key's first remembered proof (about its oldest) may be forgotten. */
function retryAfter(proofs: Map<string, UsedProof>, nowSeconds: number): number {
  const first = proofs.values().next().value as UsedProof | undefined;
  return Math.max(1, Math.ceil((first?.forgetAt ?? nowSeconds) - nowSeconds));
}
