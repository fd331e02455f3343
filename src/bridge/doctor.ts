/** `chat-mcp-bridge doctor`: why the bridge does or does not connect, as a checklist with the fix for each failure. */

import { lookup } from "node:dns/promises";
import { isIP, connect as netConnect, type Socket } from "node:net";
import { checkServerIdentity, type PeerCertificate, connect as tlsConnect } from "node:tls";
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { isLoopbackHost, parseBearerChallenge } from "../auth/checks.js";
import type { DiscoveredServer } from "../auth/discovery.js";
import { AuthRequiredError } from "../auth/errors.js";
import type { OAuthSession } from "../auth/session.js";
import { withinDeadline } from "../internal/deadline.js";
import type { describeNetworkFailure } from "../internal/network-errors.js";
import { type ProxyChoice, proxyAwareFetch, resolveProxy } from "../internal/proxy.js";
import { sanitizeForTerminal } from "../internal/redact.js";
import { doesNotLookLikeChatService, notChatServiceMessage } from "../internal/service-shape.js";
import type { DoctorCommandOptions, DoctorTarget } from "./cli.js";
import type { suggestedMcpUrl } from "./endpoint-check.js";
import { createBridgeLog, describeError } from "./log.js";
import type { createBridgeAuth } from "./oauth.js";
import type { BridgeAuth, createRemoteFetch, nodeHttpFetch, RemoteHttpError } from "./upstream/http/index.js";
import type { StreamableHttpTransport } from "./upstream/legacy/index.js";

export type CheckStatus = "pass" | "fail" | "skip";

export interface DoctorCheck {
  id: string;
  title: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

export interface DoctorReport {
  url: string;
  profile: string;
  ok: boolean;
  checks: DoctorCheck[];
}

/** The bridge's options, plus `--json` and `--sign-in`. */
export type DoctorOptions = DoctorCommandOptions;

/**
 * The relay's own parts doctor runs, handed over by run.ts (which has them loaded) instead of imported here:
 * imported, they would be split out of the relay's chunk into one more file that every bridge start loads.
 */
export interface RelayParts {
  StreamableHttpTransport: typeof StreamableHttpTransport;
  RemoteHttpError: typeof RemoteHttpError;
  createRemoteFetch: typeof createRemoteFetch;
  nodeHttpFetch: typeof nodeHttpFetch;
  createBridgeAuth: typeof createBridgeAuth;
  /** Where the MCP endpoint is when the URL is not it (src/bridge/endpoint-check.ts, as `login` says it). */
  suggestedMcpUrl: typeof suggestedMcpUrl;
  /** The relay's words for proxy and certificate failures (src/internal/network-errors.ts). */
  describeNetworkFailure: typeof describeNetworkFailure;
}

const NETWORK_TIMEOUT_MS = 5_000;
const LIVE_TIMEOUT_MS = 20_000;
const PASS = "✓";
const FAIL = "✗";
const SKIP = "·";

/** Runs the checks and prints them (text or `--json`) on stdout; resolves with the exit code: 0 all passed, 1 otherwise. */
export async function runDoctor(
  target: DoctorTarget,
  options: DoctorOptions,
  parts: RelayParts,
  env: Record<string, string | undefined> = process.env,
  write: (text: string) => void = (text) => process.stdout.write(text),
): Promise<number> {
  const report = await diagnose(target, options, parts, env, options.json ? undefined : write);
  if (options.json) write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    const failed = report.checks.filter((check) => check.status === "fail").length;
    write(
      failed === 0
        ? "All checks passed.\n"
        : `${failed} check${failed === 1 ? "" : "s"} failed; the fix is under each ${FAIL}.\n`,
    );
  }
  return report.ok ? 0 : 1;
}

/** Runs every check in order; each line is printed (when `write` is given) as soon as it is known. */
export async function diagnose(
  target: DoctorTarget,
  options: DoctorOptions,
  parts: RelayParts,
  env: Record<string, string | undefined>,
  write?: (text: string) => void,
): Promise<DoctorReport> {
  const rawUrl = target.raw;
  const profile = options.profile ?? "default";
  const checks: DoctorCheck[] = [];
  const add = (check: DoctorCheck) => {
    checks.push(check);
    write?.(formatCheck(check));
  };
  const skipAll = (titles: Array<[string, string]>, reason: string) => {
    for (const [id, title] of titles) add({ id, title, status: "skip", detail: `not checked (${reason})` });
  };
  write?.(
    `chat-mcp-bridge doctor: ${sanitizeForTerminal(rawUrl, { oneLine: true })} (profile ${sanitizeForTerminal(profile, { oneLine: true })})\n`,
  );

  // URL and scheme, as the command line found them.
  const url = target.url;
  if (!url) {
    add({
      id: "url",
      title: "URL and scheme",
      status: "fail",
      detail: target.problem ?? "no URL",
      fix: "pass the MCP endpoint's full URL, e.g. https://example.com/mcp",
    });
    skipAll(REMOTE_CHECKS.slice(1), "the URL is not usable");
    return finish(rawUrl, profile, checks);
  }
  const { createBridgeAuth, nodeHttpFetch } = parts;
  const loopback = isLoopbackHost(url.hostname);
  add({
    id: "url",
    title: "URL and scheme",
    status: "pass",
    detail:
      url.protocol === "https:"
        ? `${url.href} (https)`
        : `${url.href} (plain http${loopback ? " to this machine" : ", allowed by --allow-http: tokens travel unencrypted"})`,
  });

  // The same choice every request of the bridge makes (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; loopback direct).
  let proxy: ProxyChoice | undefined;
  try {
    const decision = resolveProxy(url, { env });
    proxy = decision.proxy;
    add({
      id: "proxy",
      title: "Proxy",
      status: "pass",
      detail: proxy ? `via ${proxy.display} (from ${proxy.source})` : `none: direct (${decision.reason})`,
    });
  } catch (error) {
    add({
      id: "proxy",
      title: "Proxy",
      status: "fail",
      ...asDetailAndFix(describeError(error), "fix the proxy variable, or unset it"),
    });
    skipAll(REMOTE_CHECKS.slice(2), "the proxy setting is not usable");
    return finish(url.href, profile, checks);
  }

  // DNS, TCP and TLS reach the server itself, or the proxy when there is one.
  const network = await checkNetwork(url, proxy, parts.describeNetworkFailure);
  for (const check of network) add(check);
  const reachable = network.every((check) => check.status !== "fail");

  // Its log stays quiet: each check reports what it found.
  const session = await createBridgeAuth(
    { ...options, url },
    createBridgeLog({ debug: false, silent: true }),
    env,
  );
  let endpoint: EndpointAnswer | undefined;
  if (reachable) {
    const checked = await checkEndpoint(
      url,
      options,
      nodeHttpFetch,
      parts.describeNetworkFailure,
      parts.suggestedMcpUrl,
    );
    endpoint = checked.answer;
    add(checked.check);
  } else skipAll([["endpoint", "MCP endpoint"]], "the server is not reachable");

  const needsAuth = endpoint?.status === 401 && !hasAuthorizationHeader(options);
  if (!endpoint || endpoint.failed) {
    skipAll(DISCOVERY_CHECKS, endpoint ? "the endpoint check failed" : "the server is not reachable");
  } else if (!needsAuth) {
    skipAll(DISCOVERY_CHECKS, "the server answers without sign-in");
  } else {
    const discoveryFetch = proxyAwareFetch({ env });
    for (const check of await checkDiscovery(url, options, endpoint.resourceMetadataUrl, discoveryFetch))
      add(check);
  }

  add(await checkTokenStore(session, options));
  const answered = endpoint !== undefined && !endpoint.failed;
  const login = await checkLogin(session, url, options, answered ? needsAuth : undefined);
  add(login);

  if (!answered)
    skipAll(
      [["live", "Live initialize + tools/list"]],
      endpoint ? "the endpoint check failed" : "the server is not reachable",
    );
  else if (needsAuth && login.status === "fail")
    skipAll([["live", "Live initialize + tools/list"]], "no usable login");
  else {
    const listed: { result?: unknown } = {};
    add(await checkLive(url, options, needsAuth ? session : undefined, parts, listed));
    if (options.confirmTools?.length) add(await checkConfirmations(options, listed.result));
  }
  return finish(url.href, profile, checks);
}

const REMOTE_CHECKS: Array<[string, string]> = [
  ["url", "URL and scheme"],
  ["proxy", "Proxy"],
  ["dns", "DNS"],
  ["tcp", "TCP connection"],
  ["tls", "TLS certificate"],
  ["endpoint", "MCP endpoint"],
  ["resource-metadata", "Protected resource metadata"],
  ["authorization-server", "Authorization server"],
  ["registration", "Client registration"],
  ["token-store", "Token store"],
  ["login", "Stored login"],
  ["live", "Live initialize + tools/list"],
];
const DISCOVERY_CHECKS = REMOTE_CHECKS.slice(6, 9);

function finish(url: string, profile: string, checks: DoctorCheck[]): DoctorReport {
  return { url, profile, ok: checks.every((check) => check.status !== "fail"), checks };
}

function formatCheck(check: DoctorCheck): string {
  const mark = check.status === "pass" ? PASS : check.status === "fail" ? FAIL : SKIP;
  const fix = check.fix ? `\n    fix: ${sanitizeForTerminal(check.fix, { oneLine: true })}` : "";
  return `${mark} ${check.title}: ${sanitizeForTerminal(check.detail, { oneLine: true })}${fix}\n`;
}

/** DNS, then a TCP connection, then (https, direct) the TLS handshake and certificate chain. */
async function checkNetwork(
  url: URL,
  proxy: ProxyChoice | undefined,
  describeNetworkFailure: RelayParts["describeNetworkFailure"],
): Promise<DoctorCheck[]> {
  // The proxy's URL may hold its credentials: only its host and port are shown.
  const target = proxy?.url ?? url;
  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port) || (target.protocol === "https:" ? 443 : 80);
  const what = proxy ? `the proxy ${host}:${port} (from ${proxy.source})` : `${host}:${port}`;
  const checks: DoctorCheck[] = [];
  if (isIP(host)) {
    checks.push({
      id: "dns",
      title: "DNS",
      status: "pass",
      detail: `${host} is an IP address: no lookup needed`,
    });
  } else {
    try {
      const addresses = await withinDeadline(
        lookup(host, { all: true }),
        NETWORK_TIMEOUT_MS,
        `the lookup took longer than ${NETWORK_TIMEOUT_MS / 1000} s`,
      );
      checks.push({
        id: "dns",
        title: "DNS",
        status: "pass",
        detail: `${host} → ${addresses.map((address) => address.address).join(", ")}`,
      });
    } catch (error) {
      checks.push({
        id: "dns",
        title: "DNS",
        status: "fail",
        detail: `${host} does not resolve (${describeError(error)})`,
        fix: proxy
          ? `check the host name in ${proxy.source} for typos`
          : "check the host name in the URL for typos; on a network that needs a proxy, set HTTPS_PROXY",
      });
      return [
        ...checks,
        skipped("tcp", "TCP connection", "DNS failed"),
        skipped("tls", "TLS certificate", "DNS failed"),
      ];
    }
  }

  let socket: Socket | undefined;
  try {
    socket = await connectTcp(host, port);
    socket.destroy();
    checks.push({ id: "tcp", title: "TCP connection", status: "pass", detail: `connected to ${what}` });
  } catch (error) {
    socket?.destroy();
    checks.push({
      id: "tcp",
      title: "TCP connection",
      status: "fail",
      ...tcpFailure(error, what, proxy),
    });
    return [...checks, skipped("tls", "TLS certificate", "no TCP connection")];
  }

  if (url.protocol !== "https:") {
    checks.push({ id: "tls", title: "TLS certificate", status: "skip", detail: "not used (plain http)" });
  } else if (proxy) {
    checks.push({
      id: "tls",
      title: "TLS certificate",
      status: "skip",
      detail: "checked through the proxy by the endpoint check",
    });
  } else {
    checks.push(await checkTls(url, port, describeNetworkFailure));
  }
  return checks;
}

function skipped(id: string, title: string, reason: string): DoctorCheck {
  return { id, title, status: "skip", detail: `not checked (${reason})` };
}

function connectTcp(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        Object.assign(new Error(`no answer within ${NETWORK_TIMEOUT_MS / 1000} s`), { code: "ETIMEDOUT" }),
      );
    }, NETWORK_TIMEOUT_MS);
    socket.once("connect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function tcpFailure(
  error: unknown,
  what: string,
  proxy: ProxyChoice | undefined,
): { detail: string; fix: string } {
  const code = (error as NodeJS.ErrnoException).code;
  const subject = proxy ? "the proxy" : "the server";
  switch (code) {
    case "ECONNREFUSED":
      return {
        detail: `nothing is listening at ${what} (connection refused)`,
        fix: proxy
          ? `check the host and port in ${proxy.source}, and that the proxy is running`
          : "start the server, or check the host and port in the URL",
      };
    case "ETIMEDOUT":
      return {
        detail: `${what} did not answer within ${NETWORK_TIMEOUT_MS / 1000} s`,
        fix: `a firewall may drop the connection to ${subject}; on a network that needs a proxy, set HTTPS_PROXY`,
      };
    default:
      return {
        detail: `cannot connect to ${what} (${describeError(error)})`,
        fix: `check the network path to ${subject}`,
      };
  }
}

/** The TLS handshake with the default trust store (and NODE_EXTRA_CA_CERTS), then the host name against the certificate. */
function checkTls(
  url: URL,
  port: number,
  describeNetworkFailure: RelayParts["describeNetworkFailure"],
): Promise<DoctorCheck> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const title = "TLS certificate";
  const failure = (code: string, about: string): DoctorCheck => {
    const words =
      describeNetworkFailure(Object.assign(new Error(code), { code }), url) ??
      `The TLS certificate of ${url.host} was refused (${code}).`;
    const { detail, fix } = asDetailAndFix(words, "tell the server's operator");
    return { id: "tls", title, status: "fail", detail: `${detail} Certificate: ${about}.`, fix };
  };
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host,
      port,
      ...(isIP(host) ? {} : { servername: host }),
      // Judged below, so the certificate can be described either way.
      rejectUnauthorized: false,
    });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({
        id: "tls",
        title,
        status: "fail",
        detail: `no TLS handshake within ${NETWORK_TIMEOUT_MS / 1000} s`,
        fix: "check that the port serves https, not plain http",
      });
    }, NETWORK_TIMEOUT_MS);
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      const cert = socket.getPeerCertificate(false);
      socket.destroy();
      const about = describeCertificate(cert);
      if (!socket.authorized) resolve(failure(String(socket.authorizationError), about));
      else if (checkServerIdentity(host, cert)) resolve(failure("ERR_TLS_CERT_ALTNAME_INVALID", about));
      else resolve({ id: "tls", title, status: "pass", detail: `trusted chain; ${about}` });
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      resolve({
        id: "tls",
        title,
        status: "fail",
        detail: `TLS handshake failed (${describeError(error)})`,
        fix: "check that the port serves https; an old server may not speak TLS 1.2 or later",
      });
    });
  });
}

function describeCertificate(cert: PeerCertificate): string {
  const subject = cert.subject?.CN ?? "no common name";
  const issuer = cert.issuer?.O ?? cert.issuer?.CN ?? "unknown issuer";
  return `${subject}, issued by ${issuer}, valid until ${cert.valid_to ?? "?"}`;
}

/** A message whose last sentence says what to do, as the network failures' messages are: detail and fix. */
function asDetailAndFix(message: string, fallbackFix: string): { detail: string; fix: string } {
  const sentences = message.trim().split(/(?<=\.)\s+(?=[A-Z])/);
  if (sentences.length < 2) return { detail: message.trim(), fix: fallbackFix };
  return { detail: sentences.slice(0, -1).join(" "), fix: sentences.at(-1)! };
}

interface EndpointAnswer {
  status: number;
  failed: boolean;
  resourceMetadataUrl?: string;
}

const hasAuthorizationHeader = (options: DoctorOptions) =>
  options.headers.some((header) => header.name.toLowerCase() === "authorization");

/** An `initialize` POSTed without a token: a 401 asking for sign-in is what a protected MCP endpoint answers. */
async function checkEndpoint(
  url: URL,
  options: DoctorOptions,
  nodeHttpFetch: RelayParts["nodeHttpFetch"],
  describeNetworkFailure: RelayParts["describeNetworkFailure"],
  suggestedMcpUrl: RelayParts["suggestedMcpUrl"],
): Promise<{ check: DoctorCheck; answer?: EndpointAnswer }> {
  const title = "MCP endpoint";
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  for (const header of options.headers) headers[header.name.toLowerCase()] = header.value;
  let status: number;
  let challenge: string | null;
  let contentType: string | null;
  try {
    const response = await nodeHttpFetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(initializeRequest("chat-mcp-bridge/doctor")),
      signal: AbortSignal.timeout(10_000),
    });
    status = response.status;
    challenge = response.headers.get("www-authenticate");
    contentType = response.headers.get("content-type");
    const sessionId = response.headers.get("mcp-session-id");
    await response.body?.cancel().catch(() => undefined);
    if (sessionId) {
      const end = await nodeHttpFetch(url, {
        method: "DELETE",
        headers: { ...headers, "mcp-session-id": sessionId },
        signal: AbortSignal.timeout(5_000),
      }).catch(() => undefined);
      await end?.body?.cancel().catch(() => undefined);
    }
  } catch (error) {
    // A proxy that refused or cannot be reached, or a certificate this machine does not accept, in the relay's words.
    const named = describeNetworkFailure(error, url);
    return {
      check: {
        id: "endpoint",
        title,
        status: "fail",
        ...(named
          ? asDetailAndFix(named, "check the proxy and certificate settings")
          : {
              detail: `no HTTP answer from ${url.href} (${describeError(error)})`,
              fix: "check that the URL's port serves the MCP server over http(s)",
            }),
      },
    };
  }
  const fail = (detail: string, fix: string) => ({
    check: { id: "endpoint", title, status: "fail" as const, detail, fix },
    answer: { status, failed: true },
  });
  if (status === 401) {
    const bearer = parseBearerChallenge(challenge);
    return {
      check: {
        id: "endpoint",
        title,
        status: "pass",
        detail: `answers and asks for sign-in (401${challenge ? `, ${challenge.split(/[ ,]/)[0]}` : ""})`,
      },
      answer: { status, failed: false, resourceMetadataUrl: bearer.resourceMetadataUrl },
    };
  }
  if (status >= 200 && status < 300) {
    return {
      check: {
        id: "endpoint",
        title,
        status: "pass",
        detail: `answers initialize (${status}) without sign-in`,
      },
      answer: { status, failed: false },
    };
  }
  if (status === 404) {
    const suggestion = await suggestedMcpUrl(url, nodeHttpFetch).catch(() => undefined);
    return fail(
      `nothing at ${url.pathname} (404 Not Found)`,
      suggestion
        ? `use ${suggestion}: the MCP endpoint answers there`
        : `check the path in the URL: MCP endpoints usually end in /mcp (e.g. ${url.origin}/mcp)`,
    );
  }
  if (status === 405 || status === 406 || status === 415) {
    return fail(
      `this is not a streamable-HTTP MCP endpoint (${status})`,
      "point the bridge at the server's streamable-HTTP endpoint; it does not speak the old HTTP+SSE transport",
    );
  }
  if (status === 407) {
    return fail(
      "the proxy asks for credentials (407)",
      "put the proxy's user and password in HTTPS_PROXY (http://user:pass@host:port)",
    );
  }
  if (status === 403) {
    return fail(
      "the server refuses this client before sign-in (403)",
      "check your --header values; the server may only accept some networks",
    );
  }
  if (doesNotLookLikeChatService({ status, contentType })) {
    return fail(
      notChatServiceMessage(url.href, { status, contentType }),
      `check the URL: the chat service's MCP endpoint is its address followed by /mcp`,
    );
  }
  return fail(
    `unexpected answer ${status}`,
    status >= 500 ? "the server has a problem: try again later or tell its operator" : "check the URL",
  );
}

/** RFC 9728 protected resource metadata, RFC 8414 authorization server metadata, and how this client registers. */
async function checkDiscovery(
  url: URL,
  options: DoctorOptions,
  resourceMetadataUrl: string | undefined,
  /** The fetch the OAuth session uses: through the proxy when one applies. */
  fetchFn: typeof fetch,
): Promise<DoctorCheck[]> {
  const { discoverOAuthProtectedResourceMetadata } = await import("@modelcontextprotocol/client");
  const { discoverServer } = await import("../auth/discovery.js");
  const checks: DoctorCheck[] = [];
  try {
    const metadata = await discoverOAuthProtectedResourceMetadata(
      url.href,
      resourceMetadataUrl ? { resourceMetadataUrl } : undefined,
      fetchFn,
    );
    const scopes = metadata.scopes_supported?.join(" ");
    checks.push({
      id: "resource-metadata",
      title: "Protected resource metadata",
      status: "pass",
      detail:
        `resource ${metadata.resource}; authorization server ${metadata.authorization_servers?.[0] ?? "not named"}` +
        (scopes ? `; scopes ${scopes}` : ""),
    });
  } catch (error) {
    checks.push({
      id: "resource-metadata",
      title: "Protected resource metadata",
      status: "pass",
      detail: `none published (${describeError(error)}); the server's origin is taken as the authorization server`,
    });
  }

  let discovered: DiscoveredServer;
  try {
    discovered = await discoverServer(url.href, {
      resourceMetadataUrl,
      resource: options.resource,
      fetchFn,
      allowHttp: options.allowHttp,
      log: () => {},
    });
  } catch (error) {
    const refused = /does not cover/.test(describeError(error));
    checks.push({
      id: "authorization-server",
      title: "Authorization server",
      status: "fail",
      detail: describeError(error),
      fix: refused
        ? "check the URL; if the server's protected resource really differs from it, pass --resource <that resource>"
        : "the server's OAuth metadata is missing or unsafe: tell its operator",
    });
    checks.push(skipped("registration", "Client registration", "no authorization server"));
    return checks;
  }
  const endpoints = discovered.metadata
    ? ["authorize", "token", discovered.metadata.registration_endpoint ? "registration" : undefined]
        .filter(Boolean)
        .join(", ")
    : "no metadata: /authorize, /token and /register at its root";
  checks.push({
    id: "authorization-server",
    title: "Authorization server",
    status: "pass",
    detail: `${discovered.authorizationServerUrl} (${endpoints}); resource ${discovered.resource}`,
  });
  checks.push(registrationCheck(options, discovered));
  return checks;
}

function registrationCheck(options: DoctorOptions, server: DiscoveredServer): DoctorCheck {
  const title = "Client registration";
  if (options.clientId) {
    const secret = options.clientSecret ? "secret from $CHAT_MCP_CLIENT_SECRET" : "no secret (public client)";
    return {
      id: "registration",
      title,
      status: "pass",
      detail: `pre-registered client ${options.clientId}, ${secret}`,
    };
  }
  const metadataDocuments = server.metadata?.client_id_metadata_document_supported === true;
  if (options.clientMetadataUrl && metadataDocuments) {
    return {
      id: "registration",
      title,
      status: "pass",
      detail: `client ID metadata document ${options.clientMetadataUrl}`,
    };
  }
  const note = options.clientMetadataUrl ? " (the server does not take client ID metadata documents)" : "";
  if (!server.metadata || server.metadata.registration_endpoint) {
    return { id: "registration", title, status: "pass", detail: `dynamic registration (RFC 7591)${note}` };
  }
  return {
    id: "registration",
    title,
    status: "fail",
    detail: `the server offers no dynamic registration${note}`,
    fix:
      "pass --client-id with a client registered for redirect URI http://127.0.0.1:<--callback-port>/callback " +
      "(its secret in $CHAT_MCP_CLIENT_SECRET)" +
      (metadataDocuments ? ", or --client-metadata-url" : ""),
  };
}

async function checkTokenStore(session: OAuthSession, options: DoctorOptions): Promise<DoctorCheck> {
  const title = "Token store";
  const stored = await session.describeStorage().catch(() => undefined);
  if (stored && stored.kind !== "none") {
    return { id: "token-store", title, status: "pass", detail: `${stored.kind}: ${stored.location}` };
  }
  if (options.tokenStore === "file") {
    return { id: "token-store", title, status: "pass", detail: "0600 files (--token-store file)" };
  }
  const { loadKeychainBackend } = await import("../auth/token-store.js");
  const { backend, failures } = await loadKeychainBackend();
  if (backend) {
    const name = backend.name === "keytar" ? "keytar" : "@napi-rs/keyring (OS keychain / Secret Service)";
    return { id: "token-store", title, status: "pass", detail: `keychain via ${name}` };
  }
  if (options.tokenStore === "keychain") {
    return {
      id: "token-store",
      title,
      status: "fail",
      detail: `no keychain answered (${failures.join("; ")})`,
      fix: "unlock or start the keyring (Secret Service), or pass --token-store file",
    };
  }
  return {
    id: "token-store",
    title,
    status: "pass",
    detail: `0600 files (no keychain answered: ${failures.join("; ")})`,
  };
}

async function checkLogin(
  session: OAuthSession,
  url: URL,
  options: DoctorOptions,
  /** Whether the server asks for sign-in; undefined when the endpoint check could not tell. */
  required: boolean | undefined,
): Promise<DoctorCheck> {
  const title = "Stored login";
  const loginFix = `sign in with: ${loginCommand(url, options)} (or run doctor with --sign-in)`;
  let summary = await session.describeLogin().catch(() => undefined);
  const now = Date.now();
  const unusable = (s: typeof summary) =>
    !s?.signedIn || (s.expiresAt !== undefined && s.expiresAt <= now && !s.refreshable);
  if (options.signIn && unusable(summary) && required === true) {
    try {
      await session.signIn();
      summary = await session.describeLogin();
    } catch (error) {
      return {
        id: "login",
        title,
        status: "fail",
        detail: `sign-in failed: ${describeError(error)}`,
        fix: loginFix,
      };
    }
  }
  if (!summary?.signedIn) {
    if (required === undefined)
      return {
        id: "login",
        title,
        status: "skip",
        detail: "none stored (whether one is needed shows once the endpoint answers)",
      };
    if (!required)
      return {
        id: "login",
        title,
        status: "pass",
        detail: "none, and none needed (the server answers without sign-in)",
      };
    return {
      id: "login",
      title,
      status: "fail",
      detail: summary
        ? "a client registration but no tokens: the last sign-in did not finish or was dropped"
        : "not signed in",
      fix: loginFix,
    };
  }
  const scope = summary.scope ? `scopes ${summary.scope}` : "no scopes";
  const refresh = summary.refreshable ? "refresh possible" : "no refresh token";
  const client = summary.clientSource ? `; ${summary.clientSource} client` : "";
  if (summary.expiresAt !== undefined && summary.expiresAt <= now) {
    const when = new Date(summary.expiresAt).toISOString();
    if (!summary.refreshable) {
      return {
        id: "login",
        title,
        status: "fail",
        detail: `expired at ${when} and cannot be refreshed (no refresh token); ${scope}`,
        fix: loginFix,
      };
    }
    return {
      id: "login",
      title,
      status: "pass",
      detail: `${scope}; access token expired at ${when}, refreshed on next use (${refresh})${client}`,
    };
  }
  const expiry =
    summary.expiresAt === undefined
      ? "no expiry given"
      : `expires ${new Date(summary.expiresAt).toISOString()} (in ${Math.round((summary.expiresAt - now) / 60_000)} min)`;
  return { id: "login", title, status: "pass", detail: `${scope}; ${expiry}; ${refresh}${client}` };
}

/** `initialize` then `tools/list` as the bridge sends them, with the stored login; a browser only with `--sign-in`. */
async function checkLive(
  url: URL,
  options: DoctorOptions,
  session: OAuthSession | undefined,
  { StreamableHttpTransport, RemoteHttpError, createRemoteFetch }: RelayParts,
  listedOut: { result?: unknown } = {},
): Promise<DoctorCheck> {
  const title = "Live initialize + tools/list";
  const auth: BridgeAuth | undefined =
    session &&
    (options.signIn
      ? session
      : {
          accessToken: () => session.accessToken(),
          recover: async () => {
            throw new AuthRequiredError("the server refused the stored login", "failed");
          },
        });
  const log = createBridgeLog({ debug: false, silent: true });
  const transport = new StreamableHttpTransport(
    url,
    createRemoteFetch({ auth, headers: options.headers, log }),
  );
  const answers = new Map<string, (message: JSONRPCMessage) => void>();
  transport.onmessage = (message) => {
    if ("id" in message && !("method" in message)) answers.get(String(message.id))?.(message);
  };
  const ask = async (id: string, method: string, params?: Record<string, unknown>) => {
    const answer = new Promise<JSONRPCMessage>((resolve) => answers.set(id, resolve));
    await transport.send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    const message = await withinDeadline(
      answer,
      LIVE_TIMEOUT_MS,
      `the answer to ${method} took longer than ${LIVE_TIMEOUT_MS / 1000} s`,
    );
    if ("error" in message) throw new Error(`${method} was refused: ${message.error.message}`);
    return (message as { result: Record<string, unknown> }).result;
  };
  try {
    const init = await ask("doctor-1", "initialize", initializeRequest("chat-mcp-bridge/doctor").params);
    const version = typeof init.protocolVersion === "string" ? init.protocolVersion : undefined;
    if (version) transport.setProtocolVersion(version);
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const listed = await ask("doctor-2", "tools/list");
    listedOut.result = listed;
    const tools = Array.isArray(listed.tools) ? listed.tools.length : 0;
    const info = init.serverInfo as { name?: unknown; version?: unknown } | undefined;
    const server =
      typeof info?.name === "string" ? `${info.name} ${String(info.version ?? "")}`.trim() : "the server";
    return {
      id: "live",
      title,
      status: "pass",
      detail: `${server} answered initialize (protocol ${version ?? "?"}) and listed ${tools} tool${tools === 1 ? "" : "s"}`,
    };
  } catch (error) {
    const authFailure =
      error instanceof AuthRequiredError || (error as { cause?: unknown }).cause instanceof AuthRequiredError;
    const status = error instanceof RemoteHttpError ? error.status : undefined;
    return {
      id: "live",
      title,
      status: "fail",
      detail: describeError(error),
      fix:
        authFailure || status === 401
          ? `sign in again with: ${loginCommand(url, options)}`
          : "run the bridge with --debug and look at the log file for the exchange",
    };
  } finally {
    await withinDeadline(
      transport.terminateSession(),
      3_000,
      "ending the session took longer than 3 s",
    ).catch(() => undefined);
    await transport.close();
  }
}

/** `--confirm-tool`: the tools the client will see that need the person's approval (loaded only with the flag). */
async function checkConfirmations(options: DoctorOptions, listed: unknown): Promise<DoctorCheck> {
  const [{ toolsToConfirm }, { ToolFilter }] = await Promise.all([
    import("./steps/confirm-tool.js"),
    import("./tool-filter.js"),
  ]);
  const title = "Tools that need confirming";
  const visible = ToolFilter.from(options)?.filterListResult(listed) ?? listed;
  const tools = (visible as { tools?: Array<{ name?: unknown }> } | undefined)?.tools;
  if (!Array.isArray(tools))
    return { id: "confirm", title, status: "skip", detail: "not checked (no tools/list answer)" };
  const names = tools.flatMap((tool) => (typeof tool?.name === "string" ? [tool.name] : []));
  const { confirmed, unmatchedPatterns } = toolsToConfirm(options.confirmTools ?? [], names);
  const unmatched =
    unmatchedPatterns.length > 0
      ? `; --confirm-tool ${unmatchedPatterns.map((pattern) => JSON.stringify(pattern)).join(", ")} matches no listed tool`
      : "";
  return {
    id: "confirm",
    title,
    status: "pass",
    detail: `${confirmed.length > 0 ? confirmed.join(", ") : "none"} (asked in the client's dialog before each call)${unmatched}`,
  };
}

function loginCommand(url: URL, options: DoctorOptions): string {
  const profile = options.profile && options.profile !== "default" ? ` --profile ${options.profile}` : "";
  return `chat-mcp-bridge login${profile} ${url.href}`;
}

function initializeRequest(id: string) {
  return {
    jsonrpc: "2.0" as const,
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "chat-mcp-bridge-doctor", version: "1" },
    },
  };
}
