/** Order statistics of timing samples (milliseconds): median, p90, p99 by the nearest-rank method. */

/** The value at quantile `q` (0-1) of `sorted` (ascending), nearest rank. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** `{ n, median, p90, p99, min, max, mean }` of `samples`. */
export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort();
  const mean = sorted.reduce((sum, value) => sum + value, 0) / (sorted.length || 1);
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    min: sorted[0],
    max: sorted[sorted.length - 1],
    mean,
  };
}

/** Milliseconds since an arbitrary origin, sub-microsecond resolution. */
export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Times `calls` sequential runs of each of two async operations, alternating A B, B A, ... so drift in the machine's
 * load (shared cores) falls on both alike; the first `warmup` pairs are not recorded.
 */
export async function timeAlternating(first, second, { calls, warmup }) {
  const firstMs = [];
  const secondMs = [];
  const timed = async (operation, samples) => {
    const started = nowMs();
    await operation();
    samples?.push(nowMs() - started);
  };
  for (let pair = 0; pair < warmup + calls; pair++) {
    const record = pair >= warmup;
    if (pair % 2 === 0) {
      await timed(first, record ? firstMs : undefined);
      await timed(second, record ? secondMs : undefined);
    } else {
      await timed(second, record ? secondMs : undefined);
      await timed(first, record ? firstMs : undefined);
    }
  }
  return [firstMs, secondMs];
}
