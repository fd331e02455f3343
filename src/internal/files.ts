/** File helpers of the parts that keep state on disk: mkdir -p that cannot hang, atomic writes, is-this-pid-alive, a flag's small file read. */
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { UsageError } from "./usage-error.js";

/**
 * `mkdir -p` that fails instead of spinning: `mkdirSync(dir, { recursive: true })` loops forever on Node 22 and 24
 * (Node 26 throws) when mkdir answers ENOENT under an existing parent (e.g. anywhere under /proc). `mode` applies to what it creates.
 */
export function ensureDirectory(dir: string, mode?: number): void {
  try {
    mkdirSync(dir, { mode });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return;
    const parent = dirname(dir);
    if (code !== "ENOENT" || parent === dir) throw error;
    ensureDirectory(parent, mode);
    try {
      mkdirSync(dir, { mode });
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== "EEXIST") throw again;
    }
  }
}

/** The temporary file `writeFileAtomic` writes first: `<file>.<pid>.tmp`, so a dead writer's leftovers can be told. */
export const temporaryFileOf = (file: string): string => `${file}.${process.pid}.tmp`;

/**
 * Windows refuses to rename over a file another process has open (another bridge reading the login, an antivirus
 * scanner, a backup or indexing service) with EPERM, EACCES or EBUSY, for as long as it stays open. After the
 * retries, the error says so instead of reading as a permission problem.
 */
export class FileInUseError extends Error {
  readonly code = "EFILEINUSE";
  constructor(
    readonly path: string,
    options: { cause: unknown },
  ) {
    super(`another process has ${path} open (${(options.cause as NodeJS.ErrnoException).code})`, options);
    this.name = "FileInUseError";
  }
}

/** Another platform's rules and a failing rename, for tests. */
export interface RenameOptions {
  platform?: NodeJS.Platform;
  rename?: (from: string, to: string) => void;
  pause?: (ms: number) => void;
}

const RENAME_RETRY_CODES = new Set(["EPERM", "EACCES", "EBUSY"]);
/** Waits between rename attempts on Windows: about one second in all, as npm's graceful-fs does for a while. */
const RENAME_BACKOFF_MS = [10, 20, 40, 80, 160, 320, 370];

/**
 * `rename` over `to`, retried on Windows while another process holds the target open. The wait blocks this thread
 * (the callers are synchronous, and a held file is rare and short); other platforms fail at once, where these
 * codes mean a real permission problem.
 */
export function renameReplacing(
  from: string,
  to: string,
  { platform = process.platform, rename = renameSync, pause = pauseThread }: RenameOptions = {},
): void {
  for (let attempt = 0; ; attempt++) {
    try {
      rename(from, to);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      if (platform !== "win32" || !RENAME_RETRY_CODES.has(code)) throw error;
      const wait = RENAME_BACKOFF_MS[attempt];
      if (wait === undefined) throw new FileInUseError(to, { cause: error });
      pause(wait);
    }
  }
}

function pauseThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Writes `contents` to `file` as a 0600 file: a temporary file, fsync, rename over the target, fsync the directory,
 * so a crash or a reader sees the old content or the new, never half. Not write-file-atomic (7, for Node 22.12; 8 wants
 * 22.22): its rename is not retried while Windows holds the target open (renameReplacing, test/internal/files.test.ts),
 * it does not fsync the directory, and it would install signal-exit beside it. A failure (full disk, file too large)
 * leaves no temporary file behind. The directory is created (with `dirMode`) when missing.
 */
export function writeFileAtomic(
  file: string,
  contents: string,
  { dirMode, rename }: { dirMode?: number; rename?: RenameOptions } = {},
): void {
  const dir = dirname(file);
  ensureDirectory(dir, dirMode);
  const temp = temporaryFileOf(file);
  try {
    const fd = openSync(temp, "w", 0o600);
    try {
      // One write() may store only part of the bytes (file size limit, full disk): loop until all are written,
      // so the next write reports the error instead of renaming a truncated file over the data file.
      const bytes = Buffer.from(contents, "utf8");
      let written = 0;
      while (written < bytes.length) {
        const count = writeSync(fd, bytes, written, bytes.length - written);
        if (count <= 0) throw new Error(`short write to ${temp}`);
        written += count;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameReplacing(temp, file, rename);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  try {
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  }
}

/** True while a process with this id runs (EPERM: it runs as another user). */
export function isProcessAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The text of a small file a command-line flag names: a regular file of at most `maxBytes` (a FIFO or device is
 * refused, never waited on). `privateToUser`: on Linux and macOS, also refused unless it is this user's and group
 * and others can neither read nor write it (the file holds a secret). Errors name the flag and the file, never
 * its content.
 */
export function readSmallFile(
  path: string,
  {
    flag,
    maxBytes,
    holds,
    privateToUser = false,
  }: { flag: string; maxBytes: number; holds: string; privateToUser?: boolean },
): string {
  const shown = JSON.stringify(path);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO with no writer is refused below instead of hanging the start.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new UsageError(
      `${flag}: cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  try {
    // The checks are on the opened file, so a file swapped after them is not the one read.
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UsageError(`${flag}: ${shown} is not a regular file`);
    const uid = privateToUser && process.platform !== "win32" ? process.getuid?.() : undefined;
    if (uid !== undefined) {
      if (stats.uid !== uid)
        throw new UsageError(
          `${flag}: refusing ${shown}: it belongs to uid ${stats.uid}, not to you (uid ${uid}); keep it in a file of your own`,
        );
      if (stats.mode & 0o077)
        throw new UsageError(
          `${flag}: refusing ${shown}: group or other users can read or write it ` +
            `(mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")}); run chmod 600 ${shellWord(path)}`,
        );
    }
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    // The file may grow while it is read: never read past the cap.
    while (length < buffer.length) {
      const count = readSync(fd, buffer, length, buffer.length - length, length);
      if (count === 0) break;
      length += count;
    }
    if (length > maxBytes)
      throw new UsageError(`${flag}: ${shown} is larger than ${maxBytes} bytes; it holds ${holds}`);
    return buffer
      .subarray(0, length)
      .toString("utf8")
      .replace(/^\uFEFF/, "");
  } finally {
    closeSync(fd);
  }
}

/** `path` as a shell word, for a command to copy. */
const shellWord = (path: string): string =>
  /^[\w./:@+-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
