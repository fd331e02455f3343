/** Which proxy a request goes through (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, as curl reads them), and the agents that carry it, loaded only when a proxy applies. */
import type { ClientRequest, Agent as HttpAgent, IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import { ProxyConfigError, ProxyError } from "./network-errors.js";
import { markNeverSent } from "./request-failure.js";

/** The environment the proxy variables are read from (default `process.env`). */
export type ProxyEnv = Record<string, string | undefined>;

/** An explicit choice that overrides the environment: a proxy URL, or `false` for none. */
export type ProxySetting = string | false | undefined;

/** A proxy chosen for one URL. `url` holds the credentials, for the agents only: show `display` instead. */
export interface ProxyChoice {
  readonly url: URL;
  /** Scheme, host and port, never the user name or password. */
  readonly display: string;
  /** Where it came from: `HTTPS_PROXY`, `https_proxy`, `HTTP_PROXY`, `http_proxy` or `proxy option`. */
  readonly source: string;
}

/** What a URL's requests do: go `direct` (with the reason) or through `proxy`. */
export type ProxyDecision =
  | { readonly proxy: ProxyChoice; readonly reason?: undefined }
  | { readonly proxy?: undefined; readonly reason: string };

export { ProxyConfigError, ProxyError };

const VARIABLES = {
  "https:": ["https_proxy", "HTTPS_PROXY"],
  "http:": ["http_proxy", "HTTP_PROXY"],
} as const;

/** True when any proxy variable is set: only then is anything proxy-related worth loading. */
export function hasProxyVariable(env: ProxyEnv = process.env): boolean {
  return Boolean(env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY);
}

/**
 * The proxy requests to `target` go through. The lowercase variable wins over the uppercase one; `https:` URLs
 * read only HTTPS_PROXY and `http:` URLs only HTTP_PROXY (as curl and Go do). Loopback hosts always go direct.
 * Throws ProxyConfigError for a value that is not an http(s) proxy URL. Not undici's EnvHttpProxyAgent, which fails
 * 11 of this module's 43 NO_PROXY cases and proxies loopback (bench/HISTORY.md), and names no variable in errors.
 */
export function resolveProxy(
  target: URL | string,
  options: { env?: ProxyEnv; proxy?: ProxySetting } = {},
): ProxyDecision {
  const url = typeof target === "string" ? new URL(target) : target;
  if (isLoopbackHost(url.hostname)) return { reason: "loopback is never proxied" };
  if (options.proxy === false) return { reason: "proxy turned off by the proxy option" };
  if (options.proxy !== undefined) return { proxy: parseProxyUrl(options.proxy, "proxy option") };
  const env = options.env ?? process.env;
  const names = VARIABLES[url.protocol as keyof typeof VARIABLES];
  if (!names) return { reason: `${url.protocol} URLs are not proxied` };
  const source = names.find((name) => env[name]);
  if (!source) return { reason: `${names[1]} is not set` };
  const noProxy = env.no_proxy || env.NO_PROXY;
  const bypass = noProxy ? noProxyMatch(url, noProxy) : undefined;
  if (bypass) return { reason: `NO_PROXY matches ${bypass}` };
  return { proxy: parseProxyUrl(env[source] as string, source) };
}

/** One line for `--debug` and `doctor`: the proxy a URL would use and why, never its credentials. */
export function describeProxyFor(
  target: URL | string,
  env: ProxyEnv = process.env,
  proxy?: ProxySetting,
): string {
  try {
    const decision = resolveProxy(target, { env, proxy });
    return decision.proxy
      ? `via proxy ${decision.proxy.display} (from ${decision.proxy.source})`
      : `direct (${decision.reason})`;
  } catch (error) {
    return `no usable proxy: ${(error as Error).message}`;
  }
}

function parseProxyUrl(value: string, source: string): ProxyChoice {
  // Like curl, a value without a scheme is an http proxy ("proxy.corp:3128").
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProxyConfigError(`${source} is not a valid proxy URL; expected http://host:port.`);
  }
  const display = `${url.protocol}//${url.host}`;
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ProxyConfigError(
      `${source} names a ${url.protocol.slice(0, -1)} proxy (${display}); only http:// and https:// proxies are supported.`,
    );
  }
  return { url, display, source };
}

/** 127.0.0.0/8 and ::1; BlockList also matches their IPv4-mapped spelling (::ffff:127.0.0.1). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** localhost, *.localhost, 127.0.0.0/8 and ::1 (in any spelling, with or without brackets, IPv4-mapped too). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return matchesAddresses(LOOPBACK, host);
}

/** The NO_PROXY entry (`*`, a domain and its subdomains, an IP or CIDR block, each with an optional `:port`) matching `url`. */
export function noProxyMatch(url: URL, noProxy: string): string | undefined {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === "*") return entry;
    const { name, entryPort } = splitEntry(entry);
    if (entryPort && entryPort !== port) continue;
    if (matchesName(host, name)) return raw.trim();
  }
  return undefined;
}

function splitEntry(entry: string): { name: string; entryPort?: string } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { name: bracketed[1] as string, entryPort: bracketed[2] };
  // A bare IPv6 address has several colons and no port.
  if (isIP(entry.split("/")[0] ?? "") === 6) return { name: entry };
  const withPort = /^(.+):(\d+)$/.exec(entry);
  return withPort ? { name: withPort[1] as string, entryPort: withPort[2] } : { name: entry };
}

function matchesName(host: string, name: string): boolean {
  const [address = "", prefix] = name.split("/");
  const family = isIP(address);
  if (!family) return prefix === undefined && !isIP(host) && matchesDomain(host, name);
  const bits = family === 4 ? 32 : 128;
  if (prefix !== undefined && (!/^\d+$/.test(prefix) || Number(prefix) > bits)) return false;
  // An IPv6 entry never covers an IPv4 host (BlockList would: ::/0 holds ::ffff:0:0/96); the reverse is the
  // same host spelled as IPv6 (::ffff:10.1.2.3 is 10.1.2.3), which BlockList matches.
  if (family === 6 && isIP(host) === 4) return false;
  const block = new BlockList();
  block.addSubnet(address, prefix === undefined ? bits : Number(prefix), family === 4 ? "ipv4" : "ipv6");
  return matchesAddresses(block, host);
}

/** A host name entry covers the name and its subdomains (`corp.example`, `.corp.example`, `*.corp.example`). */
function matchesDomain(host: string, name: string): boolean {
  const domain = name.replace(/^\*?\./, "");
  return host === domain || host.endsWith(`.${domain}`);
}

/** True when `host` is an IP address in `block`; a host name never is (it is not resolved). */
function matchesAddresses(block: BlockList, host: string): boolean {
  const family = isIP(host);
  return family !== 0 && block.check(host, family === 4 ? "ipv4" : "ipv6");
}

/** undici dispatchers (for fetch) and node:http agents, one per proxy URL, made on first use. */
const dispatchers = new Map<string, Promise<unknown>>();
const agents = new Map<string, Promise<HttpAgent>>();

/**
 * The undici dispatcher for `choice`: ProxyAgent behind Dispatcher1Wrapper (Node's own fetch calls dispatchers with
 * the handler API undici 8 dropped), tunnelling http:// targets too, as the node:http path does.
 */
export function proxyDispatcher(choice: ProxyChoice): Promise<unknown> {
  let dispatcher = dispatchers.get(choice.url.href);
  if (!dispatcher) {
    dispatcher = import("undici").then(
      ({ ProxyAgent, Dispatcher1Wrapper }) =>
        new Dispatcher1Wrapper(new ProxyAgent({ uri: choice.url.href, proxyTunnel: true })),
    );
    dispatchers.set(choice.url.href, dispatcher);
  }
  return dispatcher;
}

/** The node:http(s) agent for `choice`: a CONNECT tunnel for both schemes; pair its requests with `watchProxyConnect`. */
export function proxyAgent(choice: ProxyChoice): Promise<HttpAgent> {
  let agent = agents.get(choice.url.href);
  if (!agent) {
    agent = import("https-proxy-agent").then(
      ({ HttpsProxyAgent }) => new HttpsProxyAgent(choice.url, { keepAlive: true, timeout: 4_000 }),
    );
    agents.set(choice.url.href, agent);
  }
  return agent;
}

/** A proxy's refusal of the CONNECT (407, 403, 502...) fails the request with a ProxyError, not as the server's answer. */
export function watchProxyConnect(request: ClientRequest, choice: ProxyChoice, target: URL): void {
  request.once("proxyConnect", (connect: Pick<IncomingMessage, "statusCode" | "statusMessage">) => {
    const status = connect.statusCode ?? 0;
    if (status !== 200) request.destroy(proxyRefusal(choice, target, status, connect.statusMessage));
  });
}

/** How a node:http request reaches its target through a proxy: the agent, and the proxy it names in errors. */
export interface NodeProxyRoute {
  agent: HttpAgent;
  choice: ProxyChoice;
}

/** The proxy route for a node:http(s) request to `target`, or undefined to go direct (then nothing is loaded). */
export async function nodeProxyRoute(
  target: URL,
  options: { env?: ProxyEnv; proxy?: ProxySetting } = {},
): Promise<NodeProxyRoute | undefined> {
  if (options.proxy === false || (options.proxy === undefined && !hasProxyVariable(options.env)))
    return undefined;
  const { proxy: choice } = resolveProxy(target, options);
  return choice ? { agent: await proxyAgent(choice), choice } : undefined;
}

/** fetch that honours the proxy variables (or an explicit setting); no proxy applies, no proxy code loads. */
export function proxyAwareFetch(
  options: { env?: ProxyEnv; proxy?: ProxySetting; fetch?: typeof fetch } = {},
): typeof fetch {
  const base = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  if (options.proxy === false || (options.proxy === undefined && !hasProxyVariable(options.env))) return base;
  return async (input, init) => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    let decision: ProxyDecision;
    try {
      decision = resolveProxy(target, { env: options.env, proxy: options.proxy });
    } catch (error) {
      throw new TypeError("fetch failed", { cause: error });
    }
    if (!decision.proxy) return base(input, init);
    const choice = decision.proxy;
    const dispatcher = await proxyDispatcher(choice);
    try {
      return await base(input, { ...init, dispatcher } as RequestInit);
    } catch (error) {
      const proxyFailure = proxyFailureOf(error, choice, target);
      if (!proxyFailure) throw error;
      // The proxy refused or could not be reached: the request went no further.
      const failure = new TypeError("fetch failed", { cause: proxyFailure });
      markNeverSent(failure);
      throw failure;
    }
  };
}

/** The ProxyError behind a failed proxied request when the proxy is what failed (refused, or not reachable). */
export function proxyFailureOf(error: unknown, choice: ProxyChoice, target: URL): ProxyError | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ProxyError) return cause;
    const status = /Proxy response \((\d{3})\)/.exec(cause.message)?.[1];
    if (status) return proxyRefusal(choice, target, Number(status));
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && code in PROXY_CONNECT_FAILURES)
      return proxyUnreachable(choice, code, cause);
  }
  return undefined;
}

const PROXY_CONNECT_FAILURES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "timed out",
  ECONNRESET: "connection reset",
  EHOSTUNREACH: "host unreachable",
};

/** No connection to the proxy itself: its message names the proxy and its variable. */
export function proxyUnreachable(choice: ProxyChoice, code: string, cause?: unknown): ProxyError {
  return new ProxyError(
    `Could not connect to the proxy ${choice.display} (from ${choice.source}): ${PROXY_CONNECT_FAILURES[code] ?? code} (${code}). ` +
      `Check ${choice.source} and that the proxy is running and reachable.`,
    choice.display,
    undefined,
    { cause },
  );
}

function proxyRefusal(choice: ProxyChoice, target: URL, status: number, statusMessage?: string): ProxyError {
  const destination = `${target.hostname}:${target.port || (target.protocol === "https:" ? "443" : "80")}`;
  const answer = statusMessage ? `${status} ${statusMessage}` : String(status);
  const check =
    status === 407
      ? `Check the user name and password in ${choice.source} (http://user:password@host:port, special characters percent-encoded).`
      : status === 403
        ? `The proxy does not allow ${destination}: ask its administrator, or add the host to NO_PROXY if it is reachable directly.`
        : `Check the host name; the proxy could not reach ${destination}.`;
  return new ProxyError(
    `The proxy ${choice.display} (from ${choice.source}) refused the connection to ${destination}: ${answer}. ${check}`,
    choice.display,
    status,
  );
}
