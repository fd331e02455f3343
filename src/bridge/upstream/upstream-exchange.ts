/** The upstream exchange as the command line shapes it: node:http (or a caller's fetch) bounded by the time-outs, and the cookie jar. */
import type { NetworkFlagOptions } from "../options/network-flags.js";
import { CookieJar, withCookieJar } from "./http/cookie-jar.js";
import { fetchExchange } from "./http/fetch-exchange.js";
import type { HttpExchange } from "./http/http-exchange.js";
import { nodeHttpExchange } from "./http/node-http-exchange.js";
import { withUpstreamTimeouts } from "./http/time-outs.js";

/** One per process: the relay, its probes and its pings share the jar, so a load balancer's sticky cookie holds. */
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
