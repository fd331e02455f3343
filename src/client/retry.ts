/** When ChatClient retries, and how long it waits: GETs on failures, POSTs only when the service surely did not run them. */
import { isLastingNetworkFailure } from "../internal/network-errors.js";
import { requestNeverSent } from "../internal/request-failure.js";
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

/**
 * Whether a failed attempt with no answer is worth another. A GET is safe to repeat; a POST (timeouts and resets
 * included) only when it certainly never reached the service, as judged by the one shared classifier. Neither
 * when the failure lasts until the user acts (a proxy's refusal, an untrusted certificate).
 */
export function retriesFailure(method: HttpMethod, error: unknown): boolean {
  if (isLastingNetworkFailure(error)) return false;
  return method === "GET" || requestNeverSent(error);
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
