/** Linux: the user on the other end of a loopback TCP connection, or holding a listening port, from /proc/net/tcp and tcp6. */
import { readFileSync } from "node:fs";
import { isIPv4, isIPv6 } from "node:net";
import { endianness } from "node:os";

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"] as const;
const TCP_LISTEN = "0A";
const TCP_ESTABLISHED = "01";

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
  const wanted = [procAddress(address), procAddress(isIPv6(address) ? "::" : "0.0.0.0")];
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
  const ours = procAddresses(localAddress);
  const theirs = procAddresses(remoteAddress);
  const peer = rows.find(
    (row) =>
      row.state === TCP_ESTABLISHED &&
      theirs.includes(row.local.address) &&
      row.local.port === remotePort &&
      ours.includes(row.remote.address) &&
      row.remote.port === localPort,
  );
  return peer?.uid;
}

/**
 * The ways the kernel may print an address: an IPv4 one also as IPv4-mapped IPv6, since a dual-stack (IPv6)
 * socket connected to 127.0.0.1 sits in the tcp6 table as ::ffff:127.0.0.1.
 */
function procAddresses(address: string): string[] {
  const forms = [procAddress(address)];
  if (isIPv4(address)) forms.push(procAddress(`::ffff:${address}`));
  const mapped = address.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i);
  if (mapped) forms.push(procAddress(mapped[1]!));
  return forms.filter((form): form is string => form !== undefined);
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

function splitEnd(field: string | undefined): { address: string; port: number } | undefined {
  const match = field?.match(/^([0-9A-F]{8}|[0-9A-F]{32}):([0-9A-F]{4})$/);
  return match ? { address: match[1]!, port: Number.parseInt(match[2]!, 16) } : undefined;
}

/**
 * An address as the kernel prints it: the raw bytes in 32-bit words, each word in the machine's byte order. An
 * IPv4-mapped IPv6 address (a dual-stack listener's peer) is printed as the tcp6 table does.
 */
function procAddress(address: string): string | undefined {
  const bytes = addressBytes(address);
  if (!bytes) return undefined;
  let text = "";
  for (let word = 0; word < bytes.length; word += 4) {
    const group = bytes.subarray(word, word + 4);
    const ordered = endianness() === "LE" ? Buffer.from(group).reverse() : group;
    text += ordered.toString("hex").toUpperCase();
  }
  return text;
}

function addressBytes(address: string): Buffer | undefined {
  if (isIPv4(address)) return Buffer.from(address.split(".").map(Number));
  if (!isIPv6(address)) return undefined;
  const mapped = address.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i);
  if (mapped)
    return Buffer.concat([
      Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]),
      addressBytes(mapped[1]!)!,
    ]);
  const [head = "", tail = ""] = address.split("::");
  const groups = (part: string) => (part ? part.split(":") : []);
  const left = groups(head);
  const right = address.includes("::") ? groups(tail) : [];
  const zeros = 8 - left.length - right.length;
  const all = [...left, ...Array(Math.max(0, zeros)).fill("0"), ...right];
  if (all.length !== 8) return undefined;
  return Buffer.from(
    all.flatMap((group) => {
      const value = Number.parseInt(group, 16);
      return [value >> 8, value & 0xff];
    }),
  );
}
