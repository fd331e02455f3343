/** Linux: the user on the other end of a loopback TCP connection, or holding a listening port, from /proc/net/tcp and tcp6. */
import { readFileSync } from "node:fs";
import { isIPv6 } from "node:net";
import { endianness } from "node:os";

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"] as const;
const TCP_LISTEN = "0A";
const TCP_ESTABLISHED = "01";
const MAPPED_PREFIX = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);

/** One end of a connection as Node reports it (`socket.localAddress`, `socket.localPort`, ...). */
export interface ConnectionEnds {
  localAddress?: string | undefined;
  localPort?: number | undefined;
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}

/** Where the tables are and whose they are (another machine's, in tests). */
export interface SocketTables {
  tables?: readonly string[];
  /** This process's uid; undefined where there are no uids (Windows). */
  ownUid?: number | undefined;
  /** Whether this Linux runs under WSL, where a Windows browser's connection arrives through Microsoft's relay. */
  wsl?: boolean;
}

/**
 * Whether the peer of a connection accepted here belongs to another user. The peer's socket is the ESTABLISHED row
 * whose local end is our remote one and whose remote end is our local one: both addresses and both ports, in either
 * table. A peer that has hung up is no peer: the kernel shows an orphaned socket (FIN_WAIT2, TIME_WAIT) with uid 0,
 * whoever made it. Where the tables can be read (Linux) and no row matches, the answer is true: an unknown or
 * departed peer is refused. Where they cannot be read (other systems), false.
 *
 * Under WSL the browser is usually a Windows one, and its connection never comes from a socket of ours: in NAT
 * mode WSL's `localhost` relay (a root process started by WSL's init) connects to the port on the browser's
 * behalf, and in mirrored mode Windows routes the browser's own socket into Linux, so no row shows it (WSL1 shares
 * Windows' stack the same way). There, a root peer and an unknown peer are let through; another Linux user's
 * socket is still refused. The `state` and the sign-in cookie still bind the answer to this sign-in.
 */
export function isOtherUsersSocket(connection: ConnectionEnds, machine: SocketTables = {}): boolean {
  const { tables = TABLES, wsl = runsUnderWsl() } = machine;
  const ownUid = "ownUid" in machine ? machine.ownUid : process.getuid?.();
  if (ownUid === undefined) return false;
  const rows = readRows(tables);
  if (rows === undefined) return false;
  const owner = peerOwnerUid(connection, rows);
  if (wsl && (owner === undefined || owner === 0)) return false;
  return owner === undefined || owner !== ownUid;
}

let underWsl: boolean | undefined;

/** True when the kernel is Microsoft's WSL kernel (`4.4.0-19041-Microsoft`, `5.15.x-microsoft-standard-WSL2`). */
export function runsUnderWsl(osRelease = "/proc/sys/kernel/osrelease"): boolean {
  if (osRelease !== "/proc/sys/kernel/osrelease") return readsMicrosoft(osRelease);
  underWsl ??= readsMicrosoft(osRelease);
  return underWsl;
}

function readsMicrosoft(path: string): boolean {
  try {
    return /microsoft/i.test(readFileSync(path, "utf8"));
  } catch {
    return false;
  }
}

/** The uid owning the live (ESTABLISHED) socket at the other end of `connection`, if the tables show it. */
export function socketOwnerUid(
  connection: ConnectionEnds,
  tables: readonly string[] = TABLES,
): number | undefined {
  const rows = readRows(tables);
  return rows ? peerOwnerUid(connection, rows) : undefined;
}

/** The uid of whoever listens on `port` of the loopback `address` (or of every address), if the tables say. */
export function listenerUid(
  address: string,
  port: number,
  tables: readonly string[] = TABLES,
): number | undefined {
  const rows = readRows(tables);
  if (!rows) return undefined;
  const wanted = [canonicalAddress(address), canonicalAddress(isIPv6(address) ? "::" : "0.0.0.0")];
  const row = rows.find(
    (candidate) =>
      candidate.state === TCP_LISTEN &&
      candidate.local.port === port &&
      wanted.includes(candidate.local.address),
  );
  return row?.uid;
}

interface SocketRow {
  local: { address: string; port: number };
  remote: { address: string; port: number };
  state: string;
  uid: number;
}

function peerOwnerUid(connection: ConnectionEnds, rows: SocketRow[]): number | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = connection;
  if (!localAddress || !remoteAddress || localPort === undefined || remotePort === undefined)
    return undefined;
  const ours = canonicalAddress(localAddress);
  const theirs = canonicalAddress(remoteAddress);
  const peer = rows.find(
    (row) =>
      row.state === TCP_ESTABLISHED &&
      row.local.address === theirs &&
      row.local.port === remotePort &&
      row.remote.address === ours &&
      row.remote.port === localPort,
  );
  return peer?.uid;
}

/**
 * One spelling of an address for both sides: an IPv4-mapped IPv6 address as its IPv4 one, since a dual-stack
 * (IPv6) socket connected to 127.0.0.1 sits in the tcp6 table as ::ffff:127.0.0.1; IPv6 compressed as URLs write it.
 */
function canonicalAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return mapped;
  return isIPv6(address) ? new URL(`http://[${address}]`).hostname : address;
}

/** Every row of the tables that could be read; undefined when none could (not Linux). */
function readRows(tables: readonly string[]): SocketRow[] | undefined {
  let readAny = false;
  const rows: SocketRow[] = [];
  for (const table of tables) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    readAny = true;
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
      const fields = line.trim().split(/\s+/);
      const local = splitEnd(fields[1]);
      const remote = splitEnd(fields[2]);
      const uid = Number(fields[7]);
      if (local && remote && fields[3] && Number.isInteger(uid)) {
        rows.push({ local, remote, state: fields[3], uid });
      }
    }
  }
  return readAny ? rows : undefined;
}

/**
 * An end as the kernel prints it: the address's raw bytes in 32-bit words, each word in the machine's byte order,
 * and the port, read into the address `canonicalAddress` spells.
 */
function splitEnd(field: string | undefined): { address: string; port: number } | undefined {
  const match = field?.match(/^([0-9A-F]{8}|[0-9A-F]{32}):([0-9A-F]{4})$/);
  if (!match) return undefined;
  const bytes = Buffer.from(match[1]!, "hex");
  const port = Number.parseInt(match[2]!, 16);
  if (endianness() === "LE")
    for (let word = 0; word < bytes.length; word += 4) bytes.subarray(word, word + 4).reverse();
  if (bytes.length === 4 || bytes.subarray(0, 12).equals(MAPPED_PREFIX))
    return { address: [...bytes.subarray(-4)].join("."), port };
  const groups = Array.from({ length: 8 }, (_, index) => bytes.readUInt16BE(index * 2).toString(16));
  return { address: canonicalAddress(groups.join(":")), port };
}
