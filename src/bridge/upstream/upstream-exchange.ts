/** The upstream as the command line shapes it: node:http bounded by the time-outs, the cookie jar, the message size cap, and the 2025 session's keep-alive pings. */
import type { BridgeLog } from "../log/log.js";
import type { NetworkFlagOptions } from "../options/network-flags.js";
import { CookieJar, withCookieJar } from "./http/cookie-jar.js";
import { fetchExchange } from "./http/fetch-exchange.js";
import type { HttpExchange } from "./http/http-exchange.js";
import { nodeHttpExchange } from "./http/node-http-exchange.js";
import { withUpstreamTimeouts } from "./http/time-outs.js";
import { withKeepAlive } from "./legacy/keep-alive.js";
import { type RemoteTransport, StreamableHttpTransport } from "./legacy/streamable-http-transport.js";

/**
 * One per process: the relay, its probes and its pings share the jar, so the load balancer's cookie set on the
 * first exchange holds for the session's every request. With `fetch`, requests go through it instead of node:http.
 */
export function upstreamExchangeFor(
  options: NetworkFlagOptions,
  fetch?: typeof globalThis.fetch,
): HttpExchange {
  const timed = withUpstreamTimeouts(fetch ? fetchExchange(fetch) : nodeHttpExchange, {
    connectMs: options.connectTimeoutMs,
    headersMs: options.headersTimeoutMs,
    bodyMs: options.bodyTimeoutMs,
  });
  return options.disableCookies ? timed : withCookieJar(timed, new CookieJar());
}

/**
 * The 2025 relay's `createTransport`: messages up to `--max-message-size`, and under `--keep-alive` each session
 * pinged once idle for the interval.
 */
export function legacyTransports(
  options: NetworkFlagOptions & { maxMessageBytes?: number },
  log: BridgeLog,
): { createTransport: (url: URL, exchange: HttpExchange) => RemoteTransport } {
  const intervalMs = options.pingIntervalMs;
  const { maxMessageBytes } = options;
  return {
    createTransport: (url, exchange) => {
      const transport = new StreamableHttpTransport(
        url,
        exchange,
        maxMessageBytes ? { maxMessageBytes } : {},
      );
      return intervalMs ? withKeepAlive(transport, { intervalMs, log }) : transport;
    },
  };
}
