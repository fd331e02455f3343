/** The upstream's HTTP exchange over a `fetch` of the caller's: the relay with no socket of its own (tests in process, an embedder's network). */

import { type HttpAnswer, type HttpAnswerBody, type HttpExchange, httpAnswer } from "./http-exchange.js";
import { UpstreamTimeoutError } from "./time-outs.js";

/** Each request through `fetch`; `--headers-timeout` bounds the answer (the connection is `fetch`'s to time). */
export function fetchExchange(fetch: typeof globalThis.fetch): HttpExchange {
  return async (url, request) => {
    const headersMs = request.timeouts?.headersMs;
    const headersTimeout = new AbortController();
    const timer = headersMs
      ? setTimeout(
          () => headersTimeout.abort(new UpstreamTimeoutError("--headers-timeout", url.host, headersMs)),
          headersMs,
        )
      : undefined;
    const signal = request.signal
      ? AbortSignal.any([request.signal, headersTimeout.signal])
      : headersTimeout.signal;
    let response: Response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
        signal,
      });
    } catch (error) {
      if (headersTimeout.signal.aborted && !request.signal?.aborted)
        throw new TypeError("fetch failed", { cause: headersTimeout.signal.reason });
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return toHttpAnswer(response);
  };
}

function toHttpAnswer(response: Response): HttpAnswer {
  const stream = response.body;
  // While the body is being read its stream is locked: a cancel must go through the reader, or it is refused.
  let reading: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const body: HttpAnswerBody | null = stream && {
    async *[Symbol.asyncIterator]() {
      const reader = stream.getReader();
      reading = reader;
      try {
        for (;;) {
          const next = await reader.read();
          if (next.done) return;
          yield next.value;
        }
      } catch (error) {
        throw new TypeError("terminated", { cause: error });
      } finally {
        reading = undefined;
        reader.releaseLock();
      }
    },
    cancel: () => (reading ?? stream).cancel().catch(() => undefined),
  };
  return httpAnswer(
    response.status,
    {
      get: (name) => response.headers.get(name),
      getSetCookie: () => response.headers.getSetCookie(),
    },
    body,
  );
}
