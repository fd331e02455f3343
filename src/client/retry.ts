/** When ChatClient retries, and how long it waits: GETs on failures, POSTs only when the service surely did not run them. */
import { parseRetryAfterMs } from "./errors.js";

export const DEFAULT_MAX_RETRIES = 2;
export const BACKOFF_INITIAL_MS = 500;
export const BACKOFF_MAX_MS = 8_000;
/** The longest `Retry-After` honoured; longer asks wait this long, then the call tries again. */
export const RETRY_AFTER_MAX_MS = 60_000;

export type HttpMethod = "GET" | "POST";

/**
 * Whether an answer with this status is worth another attempt. A GET is safe to repeat, so it retries on
 * 408, 429 and 5xx. A POST retries only on 429: the service refused it before running it. A 5xx or 408 after
 * a POST may have come after the chat ran it, so repeating could run it twice.
 */
export function retriesStatus(method: HttpMethod, status: number): boolean {
  if (status === 429) return true;
  return method === "GET" && (status === 408 || status >= 500);
}

/** Socket error codes that mean the request never left this machine, so the service cannot have run it. */
const NEVER_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EADDRNOTAVAIL", "ENETUNREACH"]);

/** True when a failed fetch certainly never reached the service (connection refused, name not resolved). */
export function neverReachedService(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown; errors?: unknown } } | undefined)?.cause;
  if (!cause) return false;
  if (typeof cause.code === "string" && NEVER_SENT_CODES.has(cause.code)) return true;
  // Happy-eyeballs connects report every address tried; all of them must have refused.
  return (
    Array.isArray(cause.errors) &&
    cause.errors.length > 0 &&
    cause.errors.every((e: { code?: unknown }) => typeof e?.code === "string" && NEVER_SENT_CODES.has(e.code))
  );
}

/** Whether a failed fetch (no answer) is worth another attempt. Timeouts and resets repeat only GETs. */
export function retriesFailure(method: HttpMethod, error: unknown): boolean {
  return method === "GET" || neverReachedService(error);
}

/**
 * How long to wait before retry number `retry` (1-based): the service's `Retry-After` when it sent one
 * (capped), else exponential backoff with full jitter, so many clients do not retry in step.
 */
export function retryDelayMs(
  retry: number,
  retryAfter: string | null,
  random: () => number = Math.random,
): number {
  const asked = parseRetryAfterMs(retryAfter);
  if (asked !== undefined) return Math.min(asked, RETRY_AFTER_MAX_MS);
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** (retry - 1));
  return random() * ceiling;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
