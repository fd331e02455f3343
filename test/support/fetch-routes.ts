/** The test file's plain `fetch` answered by in-process handlers by origin: for code with no fetch option of its own (the OAuth test helpers, the server's own fetch of client metadata documents), so it needs no port. */

/** A fetch handler standing in for whatever would listen at one origin. */
export type FetchHandler = (request: Request) => Promise<Response>;

const routes = new Map<string, FetchHandler>();
let network: typeof fetch | undefined;

/** Redirects the network's `fetch` follows by default (the handlers never follow one themselves). */
const MAX_REDIRECTS = 20;

/**
 * Answers `fetch` to `origin` (`http://127.0.0.1:8787`) with `handler` until the returned function is called; other
 * origins still go to the network. Redirects are followed, and a signal honoured, as the network's fetch does. The
 * newest route to an origin wins: unit test files share a worker (isolate: false), and one that failed before closing
 * its server must not break the next; two servers alive at once need two origins (the in-process server's `url`).
 */
export function routeOrigin(origin: string, handler: FetchHandler): () => void {
  const key = new URL(origin).origin;
  routes.set(key, handler);
  if (!network) {
    network = globalThis.fetch;
    globalThis.fetch = routedFetch;
  }
  return () => {
    if (routes.get(key) !== handler) return;
    routes.delete(key);
    if (routes.size === 0 && network) {
      globalThis.fetch = network;
      network = undefined;
    }
  };
}

/**
 * The signal a fetch's caller passed, to wait on in place of `new Request(input, init).signal`: that one follows the
 * caller's through a weak reference, so an in-process fetch (no socket holding it) can lose it to the GC mid-wait.
 */
export function callerSignal(input: string | URL | Request, init?: RequestInit): AbortSignal | undefined {
  return init?.signal ?? (input instanceof Request ? input.signal : undefined);
}

async function routedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  let request = new Request(input, init);
  if (!routes.has(new URL(request.url).origin)) return (network ?? fetch)(input, init);
  const follow = request.redirect === "follow";
  // The caller's own signal, not the Request's: undici's Request follows it through a weak reference, so with no
  // socket to hold them, a hanging handler's Request, its signal and this wait can all be collected before the
  // caller's AbortSignal.timeout fires, and the fetch then never ends (seen in a full run; test/support/fetch-routes.test.ts).
  const signal = callerSignal(input, init) ?? request.signal;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const handler = routes.get(new URL(request.url).origin);
    if (!handler) return (network ?? fetch)(request);
    const response = await abortable(handler(request), signal);
    const location = response.headers.get("location");
    if (!follow || !location || ![301, 302, 303, 307, 308].includes(response.status)) return response;
    await response.body?.cancel();
    const keepsMethod = response.status === 307 || response.status === 308;
    if (keepsMethod && request.body) return response;
    request = new Request(new URL(location, request.url), {
      method: keepsMethod ? request.method : "GET",
      headers: request.headers,
      signal: request.signal,
    });
  }
  throw new TypeError("fetch failed", { cause: new Error("redirect count exceeded") });
}

/** Rejects with the signal's reason once it aborts, as the network's fetch does. */
function abortable(answer: Promise<Response>, signal: AbortSignal): Promise<Response> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
