/** Client ID metadata documents: a `client_id` that is an https URL names its own metadata, fetched (bounded, only from public addresses, pinned to the one checked) and cached. */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { BodyTooLargeError, readBoundedText } from "../../internal/bounded-body.js";
import {
  type ClientMetadata,
  DEFAULT_GRANT_TYPES,
  parseClientMetadata,
  type RegisteredClient,
} from "./registration.js";

/** Largest document read (the draft suggests a few KB). */
export const MAX_CLIENT_METADATA_DOCUMENT_BYTES = 5 * 1024;
export const CLIENT_METADATA_FETCH_TIMEOUT_MS = 5_000;
const DEFAULT_CACHE_MS = 5 * 60 * 1000;
const MAX_CACHE_MS = 24 * 3600 * 1000;
const MAX_CACHED_DOCUMENTS = 1000;

export interface ClientMetadataDocumentOptions {
  now: () => number;
  /**
   * Tests only: `http://127.0.0.1/...` and `http://localhost/...` documents are accepted too, and those loopback
   * host names may resolve to loopback addresses (any other name still may not).
   */
  allowLoopbackHttp?: boolean;
  /** Resolves document hosts; default node:dns `lookup` (all addresses). */
  lookup?: HostLookup;
  /** How long one fetch of a document may take, its host's lookup included; default CLIENT_METADATA_FETCH_TIMEOUT_MS. */
  fetchTimeoutMs?: number;
}

export type DocumentOutcome = { ok: true; client: RegisteredClient } | { ok: false; reason: string };

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export class ClientMetadataDocuments {
  readonly #options: ClientMetadataDocumentOptions;
  readonly #cache = new Map<string, { outcome: DocumentOutcome; expiresAt: number }>();

  constructor(options: ClientMetadataDocumentOptions) {
    this.#options = options;
  }

  /** True when `clientId` is in the form of a metadata document URL (https with a path; see `allowLoopbackHttp`). */
  isDocumentUrl(clientId: string): boolean {
    if (!URL.canParse(clientId)) return false;
    const url = new URL(clientId);
    if (url.username || url.password || url.hash || url.pathname === "/") return false;
    const loopbackAllowed = this.#options.allowLoopbackHttp === true && LOOPBACK_HOSTS.has(url.hostname);
    if (url.protocol === "https:") return loopbackAllowed || !isLocalHost(url.hostname);
    return url.protocol === "http:" && loopbackAllowed;
  }

  /** The client the document at `clientId` describes, from the cache while fresh; failures are cached briefly. */
  async resolve(clientId: string): Promise<DocumentOutcome> {
    const now = this.#options.now();
    const cached = this.#cache.get(clientId);
    if (cached && cached.expiresAt > now) return cached.outcome;
    const { outcome, maxAgeMs } = await this.#fetchDocument(clientId);
    this.#cache.delete(clientId);
    if (this.#cache.size >= MAX_CACHED_DOCUMENTS) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(clientId, { outcome, expiresAt: now + (outcome.ok ? maxAgeMs : 10_000) });
    return outcome;
  }

  /**
   * One GET of the document: its host resolved once and every address checked (server-side request forgery), the
   * connection made to the checked address, no redirect followed.
   */
  async #fetchDocument(clientId: string): Promise<{ outcome: DocumentOutcome; maxAgeMs: number }> {
    const fail = (reason: string) => ({ outcome: { ok: false, reason } as DocumentOutcome, maxAgeMs: 0 });
    const signal = AbortSignal.timeout(this.#options.fetchTimeoutMs ?? CLIENT_METADATA_FETCH_TIMEOUT_MS);
    const { hostname } = new URL(clientId);
    let dispatcher: { destroy(): Promise<void> } | undefined;
    try {
      const checked = await checkedAddress(hostname, {
        lookup: this.#options.lookup ?? systemLookup,
        allowLoopback: this.#options.allowLoopbackHttp === true && LOOPBACK_HOSTS.has(hostname),
        signal,
      });
      if (!checked.ok) return fail(checked.reason);
      dispatcher = await pinnedDispatcher(checked.address);
      const response = await fetch(clientId, {
        redirect: "manual",
        signal,
        headers: { accept: "application/json" },
        dispatcher,
      } as RequestInit);
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        return fail("the client metadata document redirects elsewhere (redirects are not followed)");
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        return fail(`the client metadata document answered HTTP ${response.status}`);
      }
      const text = await readBoundedText(response, {
        maxBytes: MAX_CLIENT_METADATA_DOCUMENT_BYTES,
        what: "the client metadata document",
      });
      const outcome = documentClient(clientId, text, this.#options.now());
      return { outcome, maxAgeMs: cacheLifetime(response.headers.get("cache-control")) };
    } catch (error) {
      if (error instanceof BodyTooLargeError)
        return fail(`the client metadata document is larger than ${error.maxBytes} bytes`);
      const why = (error as Error).name === "TimeoutError" ? "timed out" : "could not be fetched";
      return fail(`the client metadata document ${why}`);
    } finally {
      await dispatcher?.destroy().catch(() => undefined);
    }
  }
}

/**
 * A host named in the URL itself that the server must not be made to fetch from (server-side request forgery):
 * `localhost` names and address literals that are not public. Names that resolve to such addresses are refused
 * when the document is fetched (see checkedAddress).
 */
function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isIP(host) !== 0 && isNonPublicAddress(host);
}

/** The client a fetched document describes, when it is valid JSON metadata naming itself. */
function documentClient(clientId: string, text: string, nowMs: number): DocumentOutcome {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: "the client metadata document is not JSON" };
  }
  const named = (json as { client_id?: unknown } | null)?.client_id;
  if (named !== clientId) return { ok: false, reason: "the document's client_id is not its URL" };
  const parsed = parseClientMetadata(json);
  if (!parsed.ok) return { ok: false, reason: parsed.problem.error_description };
  const metadata: ClientMetadata = parsed.metadata;
  if (metadata.token_endpoint_auth_method !== undefined && metadata.token_endpoint_auth_method !== "none") {
    return {
      ok: false,
      reason: "a client metadata document client has no secret: token_endpoint_auth_method must be none",
    };
  }
  return {
    ok: true,
    client: {
      ...metadata,
      redirect_uris: metadata.redirect_uris ?? [],
      client_id: clientId,
      client_id_issued_at: Math.floor(nowMs / 1000),
      grant_types: metadata.grant_types ?? [...DEFAULT_GRANT_TYPES],
      response_types: metadata.response_types ?? ["code"],
      token_endpoint_auth_method: "none",
    },
  };
}

/** `max-age` of the response, bounded; `no-store`/`no-cache` still keep it a minute (a fetch per request is worse). */
function cacheLifetime(cacheControl: string | null): number {
  const maxAge = /(?:^|,)\s*max-age=(\d+)/i.exec(cacheControl ?? "")?.[1];
  if (/no-store|no-cache/i.test(cacheControl ?? "")) return 60_000;
  if (maxAge === undefined) return DEFAULT_CACHE_MS;
  return Math.min(Math.max(Number(maxAge) * 1000, 60_000), MAX_CACHE_MS);
}

/** Resolves a host name to all its addresses (node:dns `lookup` with `all: true`, or a test's stand-in). */
export type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

export const systemLookup: HostLookup = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/**
 * Every range that is not the public internet (IANA special-purpose registries): this host, loopback, private
 * (RFC 1918, ULA), CGNAT, link-local, multicast, reserved, documentation and benchmarking, IPv4-compatible and
 * local-use NAT64. BlockList checks an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) against the IPv4 ranges.
 */
const NON_PUBLIC_RANGES: ReadonlyArray<[string, number, "ipv4" | "ipv6"]> = [
  ["0.0.0.0", 8, "ipv4"],
  ["10.0.0.0", 8, "ipv4"],
  ["100.64.0.0", 10, "ipv4"],
  ["127.0.0.0", 8, "ipv4"],
  ["169.254.0.0", 16, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.0.0.0", 24, "ipv4"],
  ["192.0.2.0", 24, "ipv4"],
  ["192.88.99.0", 24, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["198.51.100.0", 24, "ipv4"],
  ["203.0.113.0", 24, "ipv4"],
  ["224.0.0.0", 4, "ipv4"],
  ["240.0.0.0", 4, "ipv4"],
  ["::", 96, "ipv6"],
  ["64:ff9b:1::", 48, "ipv6"],
  ["100::", 64, "ipv6"],
  ["2001:db8::", 32, "ipv6"],
  ["fc00::", 7, "ipv6"],
  ["fe80::", 10, "ipv6"],
  ["fec0::", 10, "ipv6"],
  ["ff00::", 8, "ipv6"],
];

function blockListOf(ranges: ReadonlyArray<[string, number, "ipv4" | "ipv6"]>): BlockList {
  const list = new BlockList();
  for (const [prefix, bits, family] of ranges) list.addSubnet(prefix, bits, family);
  return list;
}

const NON_PUBLIC = blockListOf(NON_PUBLIC_RANGES);
const LOOPBACK = blockListOf([
  ["127.0.0.0", 8, "ipv4"],
  ["::1", 128, "ipv6"],
]);

/** True for anything but a public unicast address (and for text that is no IP address at all). */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? "ipv4" : "ipv6");
}

function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? "ipv4" : "ipv6");
}

export type CheckedAddress = { ok: true; address: LookupAddress } | { ok: false; reason: string };

/**
 * The address to connect to for `hostname` (a URL's hostname: IPv6 literals in brackets): resolved once, refused
 * when any of its addresses is not public (one such answer is enough to aim the server at itself), except loopback
 * addresses when `allowLoopback` (the test-only switch, for loopback host names).
 */
export async function checkedAddress(
  hostname: string,
  options: { lookup: HostLookup; allowLoopback: boolean; signal?: AbortSignal },
): Promise<CheckedAddress> {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  const literal = isIP(host);
  let addresses: LookupAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await withSignal(options.lookup(host), options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      addresses = [];
    }
  }
  const first = addresses[0];
  if (!first) return { ok: false, reason: "the client metadata document's host could not be resolved" };
  const refused = addresses.some(
    ({ address }) => isNonPublicAddress(address) && !(options.allowLoopback && isLoopbackAddress(address)),
  );
  if (refused) {
    return {
      ok: false,
      reason: "the client metadata document's host resolves to a local or private address",
    };
  }
  return { ok: true, address: first };
}

/** `promise`, or the signal's reason once it aborts first (a resolver that hangs counts against the fetch's deadline). */
function withSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * An undici dispatcher (npm undici's Agent, which Node's global fetch accepts as `dispatcher`) whose every
 * connection goes to `address`: no second resolution between the check and the connection (DNS rebinding). TLS
 * still verifies the certificate for the URL's host name. Close it when the response is read.
 */
export async function pinnedDispatcher(address: LookupAddress): Promise<{ destroy(): Promise<void> }> {
  const { Agent, Dispatcher1Wrapper } = await import("undici");
  // Wrapped: Node's global fetch (undici 6 on Node 22, 7 on Node 24) speaks the handler API undici 8 dropped.
  return new Dispatcher1Wrapper(
    new Agent({
      connect: {
        lookup: (_hostname, options, callback) => {
          if ((options as { all?: boolean }).all) callback(null, [address]);
          else callback(null, address.address, address.family);
        },
      },
    }),
  );
}
