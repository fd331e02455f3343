/** The bridge's log file (`--debug`, `--log-file`): one line per event with an ISO timestamp, the pid and the profile, capped in size with one rotation. */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  renameSync,
  type Stats,
  statSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { loginKey } from "../../auth/login-key.js";
import { ensureDirectory } from "../../internal/files.js";
import { sanitizeForTerminal } from "../../internal/redact.js";
import type { BridgeOptions } from "../options/bridge-options.js";

/** Past this size the file is moved to `<path>.1` (replacing the previous one) and a new one is started. */
const LOG_FILE_MAX_BYTES = 5 * 1024 * 1024;

/** Where `--debug` writes without `--log-file`: `<configDir>/logs/<server-key>.log`. */
export function defaultLogFilePath(configDir: string, serverKey: string): string {
  return join(configDir, "logs", `${serverKey}.log`);
}

/** `--log-file`, else with `--debug` the server's default file (keyed as its login, so each profile has its own). */
export function bridgeLogFilePath(options: BridgeOptions, configDir: string): string | undefined {
  if (options.logFile) return options.logFile;
  if (!options.debug) return undefined;
  const key = loginKey(
    options.url.href,
    options.headers.map((header) => header.name),
    { profile: options.profile, resource: options.resource },
  );
  return defaultLogFilePath(configDir, key);
}

/** An append-only log file. Writes are synchronous, so the last lines before a crash are on disk. */
export class LogFile {
  readonly path: string;
  readonly #maxBytes: number;
  /** `profile=<name> ` on every line when the run has a `--profile` (several profiles may share one file). */
  readonly #profileTag: string;
  /** Undefined once a rotation found the name taken by something it refuses: nothing more is logged. */
  #fd: number | undefined;
  #size: number;

  /** Opens (creating it and its directory, owner-only) the file at `path`; throws when it cannot. */
  constructor(path: string, maxBytes = LOG_FILE_MAX_BYTES, context: { profile?: string } = {}) {
    this.path = path;
    this.#maxBytes = maxBytes;
    this.#profileTag = context.profile
      ? `profile=${sanitizeForTerminal(context.profile, { oneLine: true })} `
      : "";
    this.#fd = openOwnLogFile(path);
    this.#size = fstatSync(this.#fd).size;
  }

  /** Appends one event; control characters in `message` are escaped so an event is always one line. */
  write(level: string, message: string): void {
    if (this.#fd === undefined) return;
    const line = `${new Date().toISOString()} pid=${process.pid} ${this.#profileTag}${level} ${sanitizeForTerminal(message, { oneLine: true })}\n`;
    const bytes = Buffer.byteLength(line);
    // Other bridges for the same server may append to the same file: the size on disk decides.
    if (this.#size + bytes > this.#maxBytes && fstatSync(this.#fd).size + bytes > this.#maxBytes) {
      this.#rotate();
      if (this.#fd === undefined) return;
    }
    try {
      writeSync(this.#fd, line);
      this.#size += bytes;
    } catch {
      // A full disk or a removed directory must not stop the relay.
    }
  }

  close(): void {
    if (this.#fd === undefined) return;
    try {
      closeSync(this.#fd);
    } catch {}
    this.#fd = undefined;
  }

  #rotate(): void {
    try {
      renameSync(this.path, `${this.path}.1`);
    } catch {}
    this.close();
    try {
      this.#fd = openOwnLogFile(this.path);
      this.#size = fstatSync(this.#fd).size;
    } catch {
      // Something took the free name (another user's link in a shared folder): log no more rather than follow it.
    }
  }
}

/** The sticky bit (S_ISVTX, which node:fs does not export): in such a folder only a file's owner may rename or remove it. */
const STICKY = 0o1000;

// No link is followed for the last name; a FIFO fails at once (ENXIO) instead of blocking until a reader comes.
const OPEN_FLAGS =
  constants.O_WRONLY |
  constants.O_APPEND |
  constants.O_CREAT |
  (constants.O_NOFOLLOW ?? 0) |
  (constants.O_NONBLOCK ?? 0);

/**
 * Opens `path` for appending (creating it 0600, and its folder 0700), refusing anything another local user could
 * have planted to make the bridge write elsewhere: a symbolic or hard link, a FIFO or device, a file or folder of
 * theirs, a file others can write, a folder others can write that is not sticky (they could swap the file for a
 * link). The checks that matter are made on the opened file itself; the ones before it give the clearer message.
 * Windows has no uids or modes to check; it keeps the type and link checks.
 */
function openOwnLogFile(path: string): number {
  const uid = process.platform === "win32" ? undefined : process.getuid?.();
  const folder = dirname(path);
  ensureDirectory(folder, 0o700);
  if (uid !== undefined) checkFolder(folder, uid);
  const existing = lstatSync(path, { throwIfNoEntry: false });
  if (existing) checkFile(path, existing, uid);
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ELOOP: Linux and macOS for a link under O_NOFOLLOW; EMLINK: FreeBSD's. ENXIO: a FIFO nobody reads.
    if (code === "ELOOP" || code === "EMLINK") throw refused(path, "is a symbolic link");
    if (code === "ENXIO") throw refused(path, "is not a regular file");
    throw error;
  }
  try {
    checkFile(path, fstatSync(fd), uid);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

function checkFile(path: string, stats: Stats, uid: number | undefined): void {
  if (stats.isSymbolicLink()) throw refused(path, "is a symbolic link");
  if (!stats.isFile()) throw refused(path, "is not a regular file");
  if (stats.nlink > 1) throw refused(path, `has ${stats.nlink} names (hard links)`);
  if (uid === undefined) return;
  if (stats.uid !== uid) throw refused(path, `belongs to uid ${stats.uid}, not to you (uid ${uid})`);
  if (stats.mode & 0o022)
    throw new Error(
      `Refusing the log file ${path}: other users can write it (mode ${octal(stats.mode)}); ` +
        `run chmod 600 on it, or choose another --log-file.`,
    );
}

/** The folder (and a link naming it) must be the person's or root's; one others can write must be sticky. */
function checkFolder(folder: string, uid: number): void {
  const link = lstatSync(folder);
  if (link.isSymbolicLink() && link.uid !== uid && link.uid !== 0)
    throw refusedFolder(folder, `is a link of uid ${link.uid}`);
  const stats = statSync(folder);
  if (stats.uid !== uid && stats.uid !== 0)
    throw refusedFolder(folder, `belongs to uid ${stats.uid}, not to you (uid ${uid}) or root`);
  if (stats.mode & 0o022 && !(stats.mode & STICKY))
    throw refusedFolder(
      folder,
      `can be written by other users (mode ${octal(stats.mode)}) and is not sticky, so another user could ` +
        "swap the log file for a link",
    );
}

function refused(path: string, what: string): Error {
  return new Error(
    `Refusing the log file ${path}: it ${what}; another user may have put it there to make the bridge write ` +
      "to a file of yours. Remove it if it is yours, or choose another --log-file in a folder only you can write.",
  );
}

function refusedFolder(folder: string, what: string): Error {
  return new Error(
    `Refusing to log in the folder ${folder}: it ${what}. Choose a --log-file in a folder only you can write ` +
      "(the default is under the config dir, CHAT_CONFIG_DIR).",
  );
}

const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;
