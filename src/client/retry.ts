/** When ChatClient retries, and how long it waits: GETs and keyed POSTs on failures, other POSTs only when surely not run. */

import type { RetryOptions } from "ky";
import { isLastingNetworkFailure } from "../internal/network-errors.js";
import { requestNeverSent } from "../internal/request-failure.js";
import { parseRetryAfterMs } from "./errors.js";
import type { ClientLog } from "./logger.js";
import { fetchFailureOf, HTTPError, TimeoutError } from "./transport.js";

export const DEFAULT_MAX_RETRIES = 2;
export const BACKOFF_INITIAL_MS = 500;
export const BACKOFF_MAX_MS = 8_000;
/** The longest `Retry-After` honoured; longer asks wait this long, then the call tries again. */
export const RETRY_AFTER_MAX_MS = 60_000;

export type HttpMethod = "GET" | "POST";

/**
 * Whether an answer with this status is worth another attempt. A GET is safe to repeat, and so is a POST with an
 * `Idempotency-Key` (the service answers a repeat with the first answer): those retry on 408, 429 and 5xx, and a
 * keyed POST also on 409 `idempotency_key_in_progress` (its first attempt still runs). A POST without a key
 * retries only on 429: the service refused it before running it; a 5xx or 408 may have come after it ran.
 */
export function retriesStatus(method: HttpMethod, status: number, keyed = false, code?: string): boolean {
  if (status === 429) return true;
  if (method === "POST" && !keyed) return false;
  if (status === 409) return keyed && code === "idempotency_key_in_progress";
  return status === 408 || status >= 500;
}

/**
 * Whether a failed attempt with no answer is worth another. A GET or a keyed POST is safe to repeat; a POST
 * without a key (timeouts and resets included) only when it certainly never reached the service, as judged by the one shared classifier. Neither
 * when the failure lasts until the user acts (a proxy's refusal, an untrusted certificate).
 */
export function retriesFailure(method: HttpMethod, error: unknown, keyed = false): boolean {
  if (isLastingNetworkFailure(error)) return false;
  return method === "GET" || keyed || requestNeverSent(error);
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

/** What `retryPolicy` needs to know of one call. */
export interface RetriedCall {
  method: HttpMethod;
  /** `METHOD /path`, for the log. */
  label: string;
  /** A GET, or a POST that carries its `Idempotency-Key`: safe to send again. */
  keyed: boolean;
  idempotencyKey: string | undefined;
  limit: number;
  signal: AbortSignal | undefined;
  log: ClientLog;
  /** The test seam: waits here instead of ky's timer. */
  sleep: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
}

/**
 * ky's retry options for one call: ky sends, times each attempt out and schedules the retries; this policy
 * decides which failures are retried and how long to wait (`Retry-After`, capped, for any status that sends it;
 * else backoff with full jitter), and logs each retry at info.
 */
export function retryPolicy(call: RetriedCall): RetryOptions {
  const { method, keyed, signal } = call;
  let nextDelayMs = 0;
  return {
    limit: call.limit,
    methods: ["get", "post"],
    delay: () => nextDelayMs,
    shouldRetry: async ({ error, retryCount }) => {
      if (signal?.aborted) return false;
      const answer = error instanceof HTTPError ? error.response : undefined;
      const code = error instanceof HTTPError ? errorCodeOf(error.data) : undefined;
      const timedOut = error instanceof TimeoutError;
      const retries = answer
        ? retriesStatus(method, answer.status, keyed, code)
        : retriesFailure(method, timedOut ? undefined : fetchFailureOf(error), keyed);
      if (!retries) return false;
      nextDelayMs = retryDelayMs(retryCount, answer?.headers.get("retry-after") ?? null);
      const why = answer
        ? `${answer.status}${code ? ` ${code}` : ""}`
        : timedOut
          ? "a timeout"
          : "a lost connection";
      call.log.info(
        `${call.label}: retry ${retryCount} of ${call.limit} in ${Math.round(nextDelayMs)} ms after ${why}` +
          (call.idempotencyKey ? ` (same idempotency key ${call.idempotencyKey})` : ""),
      );
      if (call.sleep) {
        await call.sleep(nextDelayMs, signal);
        nextDelayMs = 0;
      }
      return true;
    },
  };
}

/** The `error.code` of an error body as ky 2 parsed it (`HTTPError.data`), when it has one. */
function errorCodeOf(data: unknown): string | undefined {
  const code = (data as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === "string" ? code : undefined;
}
