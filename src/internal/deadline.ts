/** The most a seconds flag that becomes a timer takes: a day (past 2^31-1 ms, 24.8 days, Node's timers fire at once). */
export const MAX_TIMER_SECONDS = 86_400;

/**
 * The one parser of the seconds flags that become timers (`--auth-timeout`, `--connect-timeout`, `--ping-interval`,
 * ...): milliseconds for a number above 0 (or 0 where `zeroMeansNone`) up to MAX_TIMER_SECONDS, else undefined;
 * `timerSecondsRange` says what it takes.
 */
export function timerMilliseconds(value: string, { zeroMeansNone = false } = {}): number | undefined {
  const seconds = Number(value);
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_TIMER_SECONDS)
    return undefined;
  if (seconds === 0 && !zeroMeansNone) return undefined;
  return Math.round(seconds * 1000);
}

export const timerSecondsRange = ({ zeroMeansNone = false } = {}): string =>
  zeroMeansNone
    ? `a number of seconds up to ${MAX_TIMER_SECONDS} (a day), 0 for none`
    : `a positive number of seconds, at most ${MAX_TIMER_SECONDS} (a day)`;

/** A promise bounded in time: rejects with the given message (or error) when it has not settled within the deadline. */
export function withinDeadline<T>(
  promise: Promise<T>,
  ms: number,
  message: string | (() => Error),
  { unref = false }: { unref?: boolean } = {},
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(typeof message === "string" ? new Error(message) : message()), ms);
    if (unref) timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * One deadline shared by the steps of a task (a sign-in's discovery, registration, browser and token request):
 * each step gets what is left, and `signal` aborts whatever is still in flight when it passes.
 */
export class Deadline {
  readonly at: number;
  /** Aborted when the deadline passes (its timer does not keep the process up). */
  readonly signal: AbortSignal;

  constructor(readonly ms: number) {
    this.at = Date.now() + ms;
    this.signal = AbortSignal.timeout(ms);
  }

  remainingMs(): number {
    return Math.max(0, this.at - Date.now());
  }

  /** `promise`, or `timedOut()` once the deadline passes first (or passed while it failed). */
  async bound<T>(promise: Promise<T>, timedOut: () => Error): Promise<T> {
    try {
      return await withinDeadline(promise, this.remainingMs(), timedOut);
    } catch (error) {
      // A request aborted by `signal` fails with its own words: the deadline is the reason to tell.
      throw this.signal.aborted ? timedOut() : error;
    }
  }

  /** `fetchFn` whose requests are also aborted when the deadline passes. */
  fetch(fetchFn: typeof fetch): typeof fetch {
    return ((input: string | URL | Request, init?: RequestInit) =>
      fetchFn(input, {
        ...init,
        signal: init?.signal ? AbortSignal.any([init.signal, this.signal]) : this.signal,
      })) as typeof fetch;
  }
}
