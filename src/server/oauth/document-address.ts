/** Where a client metadata document may be fetched from: its host resolved once, every address checked, the connection pinned to it. */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

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
