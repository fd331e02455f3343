/** How long the upstream waits: `--connect-timeout`, `--headers-timeout` and `--body-timeout` on its exchanges, each failing with its own name and the host; and the one reconnect window of both eras, for a server that went away. */
import type { ClientRequest } from "node:http";
import { type HttpAnswer, type HttpAnswerBody, type HttpExchange, httpAnswer } from "./http-exchange.js";

/** Each in milliseconds; absent or 0: no limit. */
export interface ExchangeTimeouts {
  /** Opening the connection: TCP, and TLS for https (a proxy's tunnel included). */
  connectMs?: number | undefined;
  /** From the request written to the answer's status and headers. */
  headersMs?: number | undefined;
  /** Between two chunks of the answer's body (an event stream that goes quiet counts too). */
  bodyMs?: number | undefined;
}

type TimeoutFlag = "--connect-timeout" | "--headers-timeout" | "--body-timeout";

/** An exchange that ran out of one of the time-outs; the cause of fetch's `TypeError`, as a socket error would be. */
export class UpstreamTimeoutError extends Error {
  override readonly name = "UpstreamTimeoutError";
  constructor(
    readonly flag: TimeoutFlag,
    host: string,
    ms: number,
  ) {
    const seconds = `${ms / 1000} s`;
    const what =
      flag === "--connect-timeout"
        ? `could not connect to ${host} within ${seconds}`
        : flag === "--headers-timeout"
          ? `no answer from ${host} within ${seconds} of the request`
          : `the answer from ${host} went ${seconds} without a byte`;
    super(`${what} (${flag})`);
  }
}

/** Exchanges bounded: connection and headers by the request function (`request.timeouts`), the body here. */
export function withUpstreamTimeouts(exchange: HttpExchange, timeouts: ExchangeTimeouts): HttpExchange {
  const { connectMs, headersMs, bodyMs } = timeouts;
  const armed = connectMs || headersMs ? { connectMs, headersMs } : undefined;
  return async (url, request) => {
    const answer = await exchange(url, armed ? { ...request, timeouts: armed } : request);
    return bodyMs && answer.body ? withBodyTimeout(answer, answer.body, url.host, bodyMs) : answer;
  };
}

/** Arms the connection and header time-outs on one node:http request: it is destroyed with the error that names them. */
export function watchExchange(outgoing: ClientRequest, url: URL, timeouts: ExchangeTimeouts): void {
  const timers: NodeJS.Timeout[] = [];
  const arm = (flag: TimeoutFlag, ms: number) => {
    const timer = setTimeout(() => outgoing.destroy(new UpstreamTimeoutError(flag, url.host, ms)), ms);
    timers.push(timer);
    return () => clearTimeout(timer);
  };
  outgoing.once("close", () => {
    for (const timer of timers) clearTimeout(timer);
  });
  const { connectMs, headersMs } = timeouts;
  if (connectMs) {
    // From now: a proxy's tunnel is opened before the request gets its socket.
    const connected = arm("--connect-timeout", connectMs);
    outgoing.once("socket", (socket) => {
      if (!socket.connecting)
        connected(); // a kept-alive connection, or a proxy's tunnel open already
      else socket.once(url.protocol === "https:" ? "secureConnect" : "connect", connected);
    });
  }
  if (headersMs) {
    outgoing.once("finish", () => {
      const answered = arm("--headers-timeout", headersMs);
      outgoing.once("response", answered);
    });
  }
}

/** `answer` whose body fails with the `--body-timeout` error when `ms` pass without a chunk. */
function withBodyTimeout(answer: HttpAnswer, body: HttpAnswerBody, host: string, ms: number): HttpAnswer {
  const timedBody: HttpAnswerBody = {
    async *[Symbol.asyncIterator]() {
      const chunks = body[Symbol.asyncIterator]();
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        const quiet = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new UpstreamTimeoutError("--body-timeout", host, ms)), ms);
        });
        let next: IteratorResult<Uint8Array>;
        try {
          next = await Promise.race([chunks.next(), quiet]);
        } catch (error) {
          if (!(error instanceof UpstreamTimeoutError)) throw error;
          await body.cancel().catch(() => undefined);
          throw new TypeError("terminated", { cause: error });
        } finally {
          clearTimeout(timer);
        }
        if (next.done) return;
        yield next.value;
      }
    },
    cancel: () => body.cancel(),
  };
  return httpAnswer(answer.status, answer.headers, timedBody);
}

/** How long requests wait for a server that went away (`CHAT_MCP_BRIDGE_RECONNECT_WINDOW_MS` overrides it). */
export const DEFAULT_RECONNECT_WINDOW_MS = 30_000;
/** A server this bridge never reached is more likely down or mistyped than restarting: the first request waits less. */
export const FIRST_CONTACT_WINDOW_MS = 3000;
/** The first wait between tries; it doubles up to MAX_RETRY_DELAY_MS. */
export const FIRST_RETRY_DELAY_MS = 200;
export const MAX_RETRY_DELAY_MS = 5000;

/** The window for one recovery: the configured one, or the shorter first-contact one before the server ever answered. */
export function reconnectWindowMs(configured: number | undefined, firstContact: boolean): number {
  const window = configured ?? DEFAULT_RECONNECT_WINDOW_MS;
  return firstContact ? Math.min(FIRST_CONTACT_WINDOW_MS, window) : window;
}

export function nextRetryDelay(delayMs: number): number {
  return Math.min(delayMs * 2, MAX_RETRY_DELAY_MS);
}
