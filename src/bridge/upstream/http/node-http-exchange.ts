/** The upstream's HTTP exchange on node:http: kept-alive connections, proxies, and "never sent" marked on failures. */
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { nodeProxyRoute, proxyFailureOf, watchProxyConnect } from "../../../internal/proxy.js";
import { markNeverSent } from "../../../internal/request-failure.js";
import { type HttpAnswer, type HttpAnswerBody, type HttpRequest, httpAnswer } from "./http-exchange.js";
import { watchExchange } from "./time-outs.js";

/** Connections for `pooled` requests to one server (16 measured against 8 and 32: bench/HISTORY.md); more wait. */
export const POOLED_CONNECTIONS = 16;
/** An answer stream open this long leaves the pool: a call waiting on a person must not hold back the others. */
const LONG_STREAM_MS = 1_000;

/** One client's two agents: `pooled` for requests that may queue, `open` for those that must not (see HttpRequest.pooled). */
interface Client {
  request: typeof httpRequest;
  pooled: HttpAgent;
  open: HttpAgent;
  slots: PoolSlots;
}

/** The pool's free connections, counted before a request exists: a burst waits as messages, not as queued requests. */
class PoolSlots {
  #free = POOLED_CONNECTIONS;
  readonly #waiting: Array<() => void> = [];

  /** Resolves with the release of one slot once one is free; rejects with the signal's reason if it aborts first. */
  take(signal: AbortSignal | undefined): Promise<() => void> {
    return new Promise((resolve, reject) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const next = this.#waiting.shift();
        if (next) next();
        else this.#free++;
      };
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(release);
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(grant);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal?.reason);
      };
      if (signal?.aborted) return reject(signal.reason);
      if (this.#free > 0) {
        this.#free--;
        return resolve(release);
      }
      this.#waiting.push(grant);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** Idle sockets are reused and close before Node servers' 5 s keep-alive timeout, never mid-close. */
function agents(Agent: typeof HttpAgent): Pick<Client, "pooled" | "open" | "slots"> {
  const options = { keepAlive: true, timeout: 4_000 };
  return {
    // The pool's bound is PoolSlots: a long answer stream leaves it without leaving its connection behind.
    pooled: new Agent({ ...options, maxFreeSockets: POOLED_CONNECTIONS }),
    open: new Agent(options),
    slots: new PoolSlots(),
  };
}

const httpClient: Client = { request: httpRequest, ...agents(HttpAgent) };
const httpsClient: Client = { request: httpsRequest, ...agents(HttpsAgent) };

/**
 * One exchange on node:http, not undici's fetch (tens of milliseconds to load). Failures reject as fetch's do:
 * TypeError "fetch failed" with the code in its cause; a body that breaks throws TypeError "terminated".
 */
export async function nodeHttpExchange(url: URL, request: HttpRequest): Promise<HttpAnswer> {
  const client = url.protocol === "https:" ? httpsClient : httpClient;
  const proxy = await nodeProxyRoute(url);
  if (request.mustNotRepeat) {
    // Two turns, so that a FIN already sent on an idle socket is read and the pool drops it (see mustNotRepeat).
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const pooled = request.pooled && !proxy;
  const release = pooled ? await client.slots.take(request.signal) : undefined;
  return new Promise((resolve, reject) => {
    // Until the connection is open, no byte of the request can have reached the server.
    let connected = false;
    const fail = (error: unknown) => {
      release?.();
      if (request.signal?.aborted) return reject(error);
      const cause = (proxy && proxyFailureOf(error, proxy.choice, url)) || error;
      const failure = new TypeError("fetch failed", { cause });
      if (!connected) markNeverSent(failure);
      reject(failure);
    };
    let outgoing: ClientRequest;
    try {
      outgoing = client.request(url, {
        method: request.method,
        headers: request.headers,
        agent: proxy?.agent ?? (pooled ? client.pooled : client.open),
        signal: request.signal,
      });
      if (proxy) watchProxyConnect(outgoing, proxy.choice, url);
      if (request.timeouts) watchExchange(outgoing, url, request.timeouts);
    } catch (error) {
      fail(error); // e.g. a header value with characters HTTP does not allow
      return;
    }
    outgoing.once("socket", (socket) => {
      // A kept-alive socket the server closed already (its FIN read) fails before the request is written.
      if (outgoing.reusedSocket) connected = !socket.readableEnded && socket.writable;
      else if (!socket.connecting) connected = true;
      else
        socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => {
          connected = true;
        });
    });
    // Later errors (the connection breaks mid-body) reach the body's reader instead; the first one settles this.
    outgoing.on("error", fail);
    if (release) outgoing.once("close", release);
    outgoing.once("response", (message) => {
      if (release && message.headers["content-type"]?.startsWith("text/event-stream"))
        setTimeout(release, LONG_STREAM_MS).unref();
      resolve(toHttpAnswer(message));
    });
    outgoing.end(request.body);
  });
}

function toHttpAnswer(message: IncomingMessage): HttpAnswer {
  const status = message.statusCode ?? 0;
  // A body that breaks before anyone reads it must not crash the process; its reader still sees the error.
  message.on("error", () => {});
  const body: HttpAnswerBody = {
    async *[Symbol.asyncIterator]() {
      try {
        for await (const chunk of message) yield chunk as Buffer;
      } catch (error) {
        throw new TypeError("terminated", { cause: error });
      }
    },
    async cancel() {
      // A body already received leaves the connection reusable; one still streaming closes it.
      if (message.complete) message.resume();
      else message.destroy();
    },
  };
  return httpAnswer(
    status,
    {
      get(name) {
        const value = message.headers[name.toLowerCase()];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(", ") : value;
      },
      getSetCookie: () => message.headers["set-cookie"] ?? [],
    },
    body,
  );
}
