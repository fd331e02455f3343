/** Client ID metadata documents: a `client_id` that is an https URL names its own metadata, fetched (bounded, only from public addresses, pinned to the one checked) and cached. */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { BodyTooLargeError, readBoundedText } from "../../internal/bounded-body.js";
import { clientOf, OAuthError, parseClientMetadata, type RegisteredClient } from "./grants.js";

/** Largest document read (the draft suggests a few KB). */
const MAX_DOCUMENT_BYTES = 5 * 1024;
const DEFAULT_CACHE_MS = 5 * 60 * 1000;
const MAX_CACHE_MS = 24 * 3600 * 1000;
const MAX_CACHED_DOCUMENTS = 1000;

/** Resolves a host name to all its addresses (node:dns `lookup` with `all: true`, or a test's stand-in). */
type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

export interface ClientMetadataDocumentOptions {
  now: () => number;
  /**
   * Tests only: `http://127.0.0.1/...` and `http://localhost/...` documents are accepted too, and those loopback
   * host names may resolve to loopback addresses (any other name still may not).
   */
  allowLoopbackHttp?: boolean;
  /** Resolves document hosts; default node:dns `lookup` (all addresses). */
  lookup?: HostLookup;
  /** How long one fetch of a document may take, its host's lookup included; default 5 s. */
  fetchTimeoutMs?: number;
}

type DocumentOutcome = { ok: true; client: RegisteredClient } | { ok: false; reason: string };

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export class ClientMetadataDocuments {
  readonly #options: ClientMetadataDocumentOptions;
  readonly #cache = new Map<string, { outcome: DocumentOutcome; expiresAt: number }>();

  constructor(options: ClientMetadataDocumentOptions) {
    this.#options = options;
  }

  #loopbackAllowed(hostname: string): boolean {
    return this.#options.allowLoopbackHttp === true && LOOPBACK_HOSTS.has(hostname);
  }

  /** True when `clientId` is in the form of a metadata document URL (https with a path; see `allowLoopbackHttp`). */
  isDocumentUrl(clientId: string): boolean {
    if (!URL.canParse(clientId)) return false;
    const url = new URL(clientId);
    if (url.username || url.password || url.hash || url.pathname === "/") return false;
    if (url.protocol === "https:") return this.#loopbackAllowed(url.hostname) || !isLocalHost(url.hostname);
    return url.protocol === "http:" && this.#loopbackAllowed(url.hostname);
  }

  /** The client the document at `clientId` describes, from the cache while fresh; failures are cached briefly. */
  async resolve(clientId: string): Promise<DocumentOutcome> {
    const now = this.#options.now();
    const cached = this.#cache.get(clientId);
    if (cached && cached.expiresAt > now) return cached.outcome;
    let outcome: DocumentOutcome;
    let maxAgeMs = 10_000;
    try {
      const fetched = await this.#fetchDocument(clientId);
      outcome = { ok: true, client: fetched.client };
      maxAgeMs = fetched.maxAgeMs;
    } catch (error) {
      outcome = { ok: false, reason: whyNot(error) };
    }
    this.#cache.delete(clientId);
    if (this.#cache.size >= MAX_CACHED_DOCUMENTS) this.#cache.delete(this.#cache.keys().next().value ?? "");
    this.#cache.set(clientId, { outcome, expiresAt: now + maxAgeMs });
    return outcome;
  }

  /**
   * One GET of the document: its host resolved once and every address checked (server-side request forgery), the
   * connection made to the checked address, no redirect followed; refusals are `OAuthError`s.
   */
  async #fetchDocument(clientId: string): Promise<{ client: RegisteredClient; maxAgeMs: number }> {
    const refuse = (reason: string) => new OAuthError("invalid_client", reason);
    const signal = AbortSignal.timeout(this.#options.fetchTimeoutMs ?? 5_000);
    const { hostname } = new URL(clientId);
    const host = hostname.replace(/^\[(.*)\]$/, "$1");
    const lookup = this.#options.lookup ?? systemLookup;
    // A resolver that hangs counts against the fetch's deadline.
    const aborted = new Promise<never>((_, reject) =>
      signal.addEventListener("abort", () => reject(signal.reason)),
    );
    aborted.catch(() => undefined);
    const addresses: LookupAddress[] = isIP(host)
      ? [{ address: host, family: isIP(host) }]
      : await Promise.race([lookup(host), aborted]).catch((error) => {
          if (signal.aborted) throw error;
          return [];
        });
    if (!addresses[0]) throw refuse("the client metadata document's host could not be resolved");
    // One answer that is not public is enough to aim the server at itself (loopback only for the test-only switch).
    const loopbackOk = this.#loopbackAllowed(hostname);
    if (
      addresses.some(
        ({ address }) => isNonPublicAddress(address) && !(loopbackOk && inList(LOOPBACK, address)),
      )
    )
      throw refuse("the client metadata document's host resolves to a local or private address");
    const dispatcher = await pinnedDispatcher(addresses[0]);
    try {
      const response = await fetch(clientId, {
        redirect: "manual",
        signal,
        headers: { accept: "application/json" },
        dispatcher,
      } as RequestInit);
      if (response.status !== 200) {
        await response.body?.cancel();
        throw refuse(
          response.status >= 300 && response.status < 400
            ? "the client metadata document redirects elsewhere (redirects are not followed)"
            : `the client metadata document answered HTTP ${response.status}`,
        );
      }
      const text = await readBoundedText(response, {
        maxBytes: MAX_DOCUMENT_BYTES,
        what: "the client metadata document",
      });
      return {
        client: documentClient(clientId, text, this.#options.now()),
        maxAgeMs: cacheLifetime(response),
      };
    } finally {
      await dispatcher.destroy().catch(() => undefined);
    }
  }
}

function whyNot(error: unknown): string {
  if (error instanceof OAuthError) return error.description;
  if (error instanceof BodyTooLargeError)
    return `the client metadata document is larger than ${error.maxBytes} bytes`;
  return `the client metadata document ${(error as Error).name === "TimeoutError" ? "timed out" : "could not be fetched"}`;
}

/**
 * A host named in the URL itself that the server must not be made to fetch from (server-side request forgery):
 * `localhost` names and address literals that are not public. Names that resolve to such addresses are refused
 * when the document is fetched.
 */
function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isIP(host) !== 0 && isNonPublicAddress(host);
}

/** The client a fetched document describes, when it is valid JSON metadata naming itself. */
function documentClient(clientId: string, text: string, nowMs: number): RegisteredClient {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new OAuthError("invalid_client", "the client metadata document is not JSON");
  }
  if ((json as { client_id?: unknown } | null)?.client_id !== clientId)
    throw new OAuthError("invalid_client", "the document's client_id is not its URL");
  const metadata = parseClientMetadata(json);
  if (metadata.token_endpoint_auth_method !== undefined && metadata.token_endpoint_auth_method !== "none") {
    const why = "a client metadata document client has no secret: token_endpoint_auth_method must be none";
    throw new OAuthError("invalid_client", why);
  }
  return clientOf(metadata, clientId, nowMs, "none");
}

/** `max-age` of the response, bounded; `no-store`/`no-cache` still keep it a minute (a fetch per request is worse). */
function cacheLifetime(response: Response): number {
  const cacheControl = response.headers.get("cache-control") ?? "";
  const maxAge = /(?:^|,)\s*max-age=(\d+)/i.exec(cacheControl)?.[1];
  if (/no-store|no-cache/i.test(cacheControl)) return 60_000;
  if (maxAge === undefined) return DEFAULT_CACHE_MS;
  return Math.min(Math.max(Number(maxAge) * 1000, 60_000), MAX_CACHE_MS);
}

const systemLookup: HostLookup = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

function blockListOf(ranges: string): BlockList {
  const list = new BlockList();
  for (const range of ranges.split(" ")) {
    const [prefix = "", bits] = range.split("/");
    list.addSubnet(prefix, Number(bits), isIP(prefix) === 4 ? "ipv4" : "ipv6");
  }
  return list;
}

/**
 * Every range that is not the public internet (IANA special-purpose registries): this host, loopback, private
 * (RFC 1918, ULA), CGNAT, link-local, multicast, reserved, documentation and benchmarking, IPv4-compatible and
 * local-use NAT64. BlockList checks an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) against the IPv4 ranges.
 */
const NON_PUBLIC = blockListOf(
  "0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24 192.0.2.0/24 " +
    "192.88.99.0/24 192.168.0.0/16 198.18.0.0/15 198.51.100.0/24 203.0.113.0/24 224.0.0.0/4 240.0.0.0/4 " +
    "::/96 64:ff9b:1::/48 100::/64 2001:db8::/32 fc00::/7 fe80::/10 fec0::/10 ff00::/8",
);
const LOOPBACK = blockListOf("127.0.0.0/8 ::1/128");

function inList(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** True for anything but a public unicast address (and for text that is no IP address at all). */
export function isNonPublicAddress(address: string): boolean {
  return isIP(address) === 0 || inList(NON_PUBLIC, address);
}

/**
 * An undici dispatcher (npm undici's Agent, which Node's global fetch accepts as `dispatcher`) whose every
 * connection goes to `address`: no second resolution between the check and the connection (DNS rebinding). TLS
 * still verifies the certificate for the URL's host name. Close it when the response is read.
 */
async function pinnedDispatcher(address: LookupAddress): Promise<{ destroy(): Promise<void> }> {
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
