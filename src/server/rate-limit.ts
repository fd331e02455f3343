/** Token buckets per key (a `/v2` principal, an OAuth client's IP): bursts up to `capacity`, refilled at `refillPerSecond` */
import type { RateLimitOptions } from "./options.js";

export const DEFAULT_RATE_LIMIT: RateLimitOptions = { capacity: 1000, refillPerSecond: 100 };

/**
 * Per client IP on the OAuth endpoints. Far above what people and test suites do (a sign-in is one `/authorize`,
 * one `/register` and a `/token` per hour), far below what a flood or a registration spammer needs.
 */
export const DEFAULT_OAUTH_RATE_LIMITS = {
  authorize: { capacity: 300, refillPerSecond: 5 },
  token: { capacity: 600, refillPerSecond: 10 },
  register: { capacity: 100, refillPerSecond: 1 },
} as const satisfies Record<string, RateLimitOptions>;

const MAX_TRACKED_BUCKETS = 10_000;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class TokenBucketLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly limits: RateLimitOptions,
    private readonly now: () => number = Date.now,
  ) {
    if (!(limits.capacity >= 1) || !(limits.refillPerSecond > 0)) {
      throw new Error("rateLimit needs capacity >= 1 and refillPerSecond > 0");
    }
  }

  /** Takes one token from `key`'s bucket, or says how long until one is available. */
  take(key: string): RateDecision {
    const now = this.now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.limits.capacity, at: now };
    const refilled = Math.min(
      this.limits.capacity,
      bucket.tokens + ((now - bucket.at) / 1000) * this.limits.refillPerSecond,
    );
    if (refilled < 1) {
      this.#buckets.set(key, { tokens: refilled, at: now });
      return { allowed: false, retryAfterSeconds: Math.ceil((1 - refilled) / this.limits.refillPerSecond) };
    }
    this.#buckets.set(key, { tokens: refilled - 1, at: now });
    if (this.#buckets.size > MAX_TRACKED_BUCKETS) this.#forgetOldest();
    return { allowed: true };
  }

  #forgetOldest(): void {
    const oldest = this.#buckets.keys().next();
    if (!oldest.done) this.#buckets.delete(oldest.value);
  }
}
