/** fetch's contract on node:http for the upstream: kept-alive connections, proxies, and "never sent" marked on failures. */
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from "node:http";
import { nodeProxyRoute, proxyFailureOf, watchProxyConnect } from "../../../internal/proxy.js";
import { markNeverSent } from "../../../internal/request-failure.js";
import type { HttpAnswer, HttpAnswerBody, HttpRequest } from "./fetch-like.js";

/**
 * At most this many connections carry `pooled` requests to one server at once; more wait for a free one (a
 * browser keeps 6 per host). With 1,000 calls in flight (and heap.ts's young generation) peak RSS was 77 MB with
 * 8 connections and 90 MB with 32, at about the same calls/s; a socket per call had cost 150 MB.
 */
export const POOLED_CONNECTIONS = 8;

/** One client's two agents: `pooled` for requests that may queue, `open` for those that must not (see HttpRequest.pooled). */
interface Client {
  request: typeof httpRequest;
  pooled: HttpAgent;
  open: HttpAgent;
}

/**
 * The server's idle connections are reused. Idle sockets close before Node servers' default 5 s keep-alive
 * timeout, so a request is not sent on a socket the server is closing.
 */
function agents(Agent: typeof HttpAgent): Pick<Client, "pooled" | "open"> {
  const options = { keepAlive: true, timeout: 4_000 };
  return {
    pooled: new Agent({ ...options, maxSockets: POOLED_CONNECTIONS, maxFreeSockets: POOLED_CONNECTIONS }),
    open: new Agent(options),
  };
}

const httpClient: Client = { request: httpRequest, ...agents(HttpAgent) };
let httpsClient: Promise<Client> | undefined;

/** node:https (and TLS) load on the first https request only. */
function loadHttpsClient(): Promise<Client> {
  httpsClient ??= import("node:https").then((https) => ({ request: https.request, ...agents(https.Agent) }));
  return httpsClient;
}

/**
 * fetch's contract on node:http: Node's global fetch (undici) costs tens of milliseconds to load, a large
 * part of the bridge's start. Failures without an answer reject as fetch's do: a TypeError "fetch failed"
 * whose cause has the code (ECONNREFUSED, ...); a body that breaks mid-way throws TypeError "terminated".
 */
export async function nodeHttpFetch(url: URL, request: HttpRequest): Promise<HttpAnswer> {
  const client = url.protocol === "https:" ? await loadHttpsClient() : httpClient;
  const proxy = await nodeProxyRoute(url);
  if (request.settleFirst) {
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return new Promise((resolve, reject) => {
    // Until the connection is open, no byte of the request can have reached the server.
    let connected = false;
    const fail = (error: unknown) => {
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
        agent: proxy?.agent ?? (request.pooled ? client.pooled : client.open),
        signal: request.signal,
      });
      if (proxy) watchProxyConnect(outgoing, proxy.choice, url);
    } catch (error) {
      fail(error); // e.g. a header value with characters HTTP does not allow
      return;
    }
    outgoing.once("socket", (socket) => {
      // A kept-alive socket the server has already closed (its FIN read, the socket not yet dropped from the
      // pool: the race of a server shutting down as a request starts) fails before the request is written.
      if (outgoing.reusedSocket) connected = !socket.readableEnded && socket.writable;
      else if (!socket.connecting) connected = true;
      else
        socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => {
          connected = true;
        });
    });
    // Later errors (the connection breaks mid-body) reach the body's reader instead; the first one settles this.
    outgoing.on("error", fail);
    outgoing.once("response", (message) => resolve(toHttpAnswer(message)));
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
  const text = async () => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of body) chunks.push(chunk);
    return Buffer.concat(chunks).toString("utf8");
  };
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get(name) {
        const value = message.headers[name.toLowerCase()];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(", ") : value;
      },
    },
    body,
    text,
    json: async () => JSON.parse(await text()) as unknown,
  };
}
