/** The upstream's request function as the command line shapes it: node:http, bounded by the time-outs, with the cookie jar. */
import type { NetworkFlagOptions } from "./network-flags.js";
import { CookieJar, withCookieJar } from "./upstream/http/cookie-jar.js";
import type { FetchLike } from "./upstream/http/fetch-like.js";
import { nodeHttpFetch } from "./upstream/http/node-http-fetch.js";
import { withUpstreamTimeouts } from "./upstream/http/time-outs.js";

/**
 * One per process: the relay, its probes and its pings share the jar, so the load balancer's cookie set on the
 * first exchange holds for the session's every request.
 */
export function upstreamFetchFor(options: NetworkFlagOptions): FetchLike {
  const timed = withUpstreamTimeouts(nodeHttpFetch, {
    connectMs: options.connectTimeoutMs,
    headersMs: options.headersTimeoutMs,
    bodyMs: options.bodyTimeoutMs,
  });
  return options.disableCookies ? timed : withCookieJar(timed, new CookieJar());
}
