/** The fetch the remote transport uses: node:http, bearer token and custom headers added, one auth recovery per request. */
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from "node:http";
import { nodeProxyRoute, proxyFailureOf, watchProxyConnect } from "../internal/proxy.js";
import { markNeverSent } from "../internal/request-failure.js";
import type { CustomHeader } from "./headers.js";
import type { BridgeLog } from "./log.js";

/** What the relay needs from the OAuth session (src/auth `OAuthSession` satisfies it). */
export interface BridgeAuth {
  /** The current access token, refreshed ahead of expiry; never opens a browser. */
  accessToken(): Promise<string | undefined>;
  /** Refresh, or sign in once in the browser, after the server refused the token; returns a fresh token. */
  recover(challenge: {
    status: number;
    wwwAuthenticate: string | null;
    rejectedToken?: string;
  }): Promise<string>;
}

/** How long a token from the session is reused before asking it again (it checks the token store's files). */
const TOKEN_REUSE_MS = 5000;

/** One HTTP request of the transport; header names are lower case. */
export interface HttpRequest {
  method: "GET" | "POST" | "DELETE";
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /**
   * Let the event loop turn twice before picking a connection. A server that closes a kept-alive connection
   * right after its last answer is read in two turns (the answer, then the close): a request picking the
   * connection in between would fail with no way to tell whether the server saw it. For requests that must
   * not run twice, so that such a failure always proves they were never sent.
   */
  settleFirst?: boolean;
}

/** A body read once, as chunks; `cancel()` drops what was not read. */
export interface HttpAnswerBody extends AsyncIterable<Uint8Array> {
  cancel(): Promise<void>;
}

/** The part of fetch's Response the transport uses. */
export interface HttpAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  readonly body: HttpAnswerBody | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

export type FetchLike = (url: URL, request: HttpRequest) => Promise<HttpAnswer>;

/**
 * The server's idle connections are reused. Idle sockets close before Node servers' default 5 s keep-alive
 * timeout, so a request is not sent on a socket the server is closing.
 */
const httpAgent = new HttpAgent({ keepAlive: true, timeout: 4_000 });
let httpsClient: Promise<{ request: typeof httpRequest; agent: HttpAgent }> | undefined;

/** node:https (and TLS) load on the first https request only. */
function loadHttpsClient(): Promise<{ request: typeof httpRequest; agent: HttpAgent }> {
  httpsClient ??= import("node:https").then((https) => ({
    request: https.request,
    agent: new https.Agent({ keepAlive: true, timeout: 4_000 }),
  }));
  return httpsClient;
}

/**
 * fetch's contract on node:http: Node's global fetch (undici) costs tens of milliseconds to load, a large
 * part of the bridge's start. Failures without an answer reject as fetch's do: a TypeError "fetch failed"
 * whose cause has the code (ECONNREFUSED, ...); a body that breaks mid-way throws TypeError "terminated".
 */
export async function nodeHttpFetch(url: URL, request: HttpRequest): Promise<HttpAnswer> {
  const client =
    url.protocol === "https:" ? await loadHttpsClient() : { request: httpRequest, agent: httpAgent };
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
        agent: proxy?.agent ?? client.agent,
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

/**
 * A body's text, at most `maxBytes`: past that, undefined (or, with `truncate`, the first `maxBytes`), and the
 * rest is never read. Every read of a server's body goes through here.
 */
export async function readBounded(
  response: HttpAnswer,
  maxBytes: number,
  truncate = false,
): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = Number(response.headers.get("content-length") ?? Number.NaN) > maxBytes && !truncate;
  if (!over) {
    try {
      for await (const chunk of response.body ?? []) {
        const room = maxBytes - total;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        total += Math.min(chunk.length, room);
        if (chunk.length > room) {
          over = true;
          break;
        }
      }
    } catch {
      // A body that breaks mid-way: what arrived is all there is.
    }
  }
  await response.body?.cancel().catch(() => undefined);
  if (over && !truncate) return undefined;
  return Buffer.concat(chunks, total).toString("utf8");
}

/**
 * `fetch` whose every exchange (the answer and its body) fails after `timeoutMs`, with an error naming `what`: for
 * probes, which must not wait forever on a server that accepts the connection and never answers. A sign-in between
 * two exchanges (see createRemoteFetch) is not counted.
 */
export function withRequestTimeout(fetch: FetchLike, timeoutMs: number, what: string): FetchLike {
  return async (url, request) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    try {
      return await fetch(url, { ...request, signal });
    } catch (error) {
      if (timeout.aborted && !request.signal?.aborted)
        throw new Error(`${what}: no answer from ${url.origin} within ${timeoutMs / 1000} s`);
      throw error;
    }
  };
}

/** True when the response asks for (other) credentials: 401, or 403 with `insufficient_scope` (step-up). */
export function isAuthChallenge(response: HttpAnswer): boolean {
  if (response.status === 401) return true;
  return response.status === 403 && /insufficient_scope/.test(response.headers.get("www-authenticate") ?? "");
}

/**
 * Wraps fetch for the remote transport. While one request recovers authorization, the others wait before
 * going out, in the order they were made, so messages are held in order and none is sent with a stale token.
 */
export function createRemoteFetch(options: {
  auth: BridgeAuth | undefined;
  headers: CustomHeader[];
  log: BridgeLog;
  fetch?: FetchLike;
}): FetchLike {
  const { auth, headers, log } = options;
  const baseFetch = options.fetch ?? nodeHttpFetch;
  let recovery: Promise<string> | undefined;
  let cached: { token: Promise<string | undefined>; until: number } | undefined;
  /** The newest token this fetch has seen: a 401 for an older one is retried with it, without a recovery. */
  let latest: string | undefined;

  // Every request needs the token; the session checks its store's files for it, so one answer serves a few seconds of
  // requests (the session refreshes well ahead of expiry, and a 401 still leads to recovery).
  const currentToken = (): Promise<string | undefined> => {
    if (!auth) return Promise.resolve(undefined);
    const now = Date.now();
    if (cached && cached.until > now) return cached.token;
    const token = auth.accessToken();
    const entry = { token, until: now + TOKEN_REUSE_MS };
    cached = entry;
    token.then(
      (value) => {
        if (cached === entry && value) latest = value;
      },
      () => {
        if (cached === entry) cached = undefined;
      },
    );
    return token;
  };

  /**
   * The one recovery for a rejected token: every request refused with the same token waits for it, so a burst
   * of 401s costs one refresh (or one sign-in), and each request is retried once with its result.
   */
  const recovered = (response: HttpAnswer, rejected: string | undefined): Promise<string> => {
    if (latest && latest !== rejected && !recovery) return Promise.resolve(latest); // already recovered
    if (!recovery) {
      log.info(
        response.status === 401
          ? "the server asked for authorization; refreshing or signing in"
          : "the server asked for more scopes; signing in again",
      );
      const started = (auth as BridgeAuth)
        .recover({
          status: response.status,
          wwwAuthenticate: response.headers.get("www-authenticate"),
          ...(rejected ? { rejectedToken: rejected } : {}),
        })
        .then((token) => {
          latest = token;
          cached = { token: Promise.resolve(token), until: Date.now() + TOKEN_REUSE_MS };
          return token;
        })
        .finally(() => {
          if (recovery === started) recovery = undefined;
        });
      recovery = started;
    }
    return recovery;
  };

  const withCredentials = (init: HttpRequest, token: string | undefined): HttpRequest => {
    const merged = { ...init.headers };
    for (const header of headers) merged[header.name.toLowerCase()] = header.value;
    if (token) merged.authorization = `Bearer ${token}`;
    return { ...init, headers: merged };
  };

  return async (url, init) => {
    if (recovery) await recovery.catch(() => undefined);
    const token = await currentToken();
    const response = await baseFetch(url, withCredentials(init, token));
    // Ending a session is best-effort: never sign in on the way out.
    if (!auth || !isAuthChallenge(response) || init.method === "DELETE") return response;

    await response.body?.cancel().catch(() => undefined);
    const fresh = await recovered(response, token);
    log.debug(`retrying ${init.method} with new credentials`);
    return baseFetch(url, withCredentials(init, fresh));
  };
}
