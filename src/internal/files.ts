/** File helpers of the parts that keep state on disk: mkdir -p that cannot hang, folders only this user writes, atomic writes, is-this-pid-alive, a flag's small file read. */
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { dirname, join } from "node:path";
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

/** The sticky bit (S_ISVTX, which node:fs does not export): in such a folder only a file's owner may rename or remove it. */
const STICKY = 0o1000;

/** This user's uid where files have owners (not on Windows, whose profile folder's permissions keep the config private). */
const ownUid = (): number | undefined => (process.platform === "win32" ? undefined : process.getuid?.());

const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;

/** A folder of this user's state that another local user made or can write: whatever is in it may be theirs. */
export class UntrustedFolderError extends Error {
  readonly code = "EUNTRUSTEDFOLDER";
  constructor(
    readonly path: string,
    why: string,
    whatToDo: string,
  ) {
    super(
      `Refusing the folder ${path}: ${why}, so another local user could plant files in it. ${whatToDo}, or point ` +
        "CHAT_CONFIG_DIR at a folder only you can write (the default is ~/.config/chat-mcp-bridge).",
    );
    this.name = "UntrustedFolderError";
  }
}

/**
 * Throws UntrustedFolderError unless `dir` is this user's (or root's) and neither group nor other users can write it
 * (with `shared`, they may where the folder is sticky, as /tmp: then they cannot rename or remove what is ours). A
 * missing folder passes (it will be made 0700); on Windows everything does.
 */
export function checkOwnFolder(dir: string, { shared = false }: { shared?: boolean } = {}): void {
  const uid = ownUid();
  if (uid === undefined) return;
  let link: Stats;
  let stats: Stats;
  try {
    link = lstatSync(dir);
    stats = link.isSymbolicLink() ? statSync(dir) : link;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const ours = (owner: number) => owner === uid || owner === 0;
  const remove = `Remove it if it is not yours (rm -r ${shellWord(dir)})`;
  if (link !== stats && !ours(link.uid))
    throw new UntrustedFolderError(dir, `it is a link of uid ${link.uid}`, remove);
  if (!stats.isDirectory()) throw new UntrustedFolderError(dir, "it is not a folder", remove);
  if (!ours(stats.uid))
    throw new UntrustedFolderError(dir, `it belongs to uid ${stats.uid}, not to you (uid ${uid})`, remove);
  if (stats.mode & 0o022 && !(shared && stats.mode & STICKY))
    throw new UntrustedFolderError(
      dir,
      `group or other users can write it (mode ${octal(stats.mode)})`,
      `If it is yours, run chmod 700 ${shellWord(dir)}`,
    );
}

/** `mkdir -p` of a folder of this user's state, made 0700, then checked with its parent (which may be a sticky /tmp). */
export function ensurePrivateDirectory(dir: string): void {
  ensureDirectory(dir, 0o700);
  checkOwnFolder(dirname(dir), { shared: true });
  checkOwnFolder(dir);
}

/**
 * The text of a state file of this user's, or undefined when it is missing or not to be trusted: opened without
 * following a link or waiting on a FIFO, then checked (a regular file of this user's, not writable by others, at most
 * `maxBytes`) on the opened file, so a file swapped after the checks is not the one read.
 */
export async function readOwnFile(path: string, maxBytes: number): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stats = await handle.stat();
    const uid = ownUid();
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    if (uid !== undefined && (stats.uid !== uid || stats.mode & 0o022)) return undefined;
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead > maxBytes ? undefined : buffer.subarray(0, bytesRead).toString("utf8");
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The folders under the config dir that hold state: logins and locks, era verdicts, log files, last tool lists. */
const STATE_FOLDERS = ["auth", "eras", "logs", "tools"];

/** Throws UntrustedFolderError when the config dir or one of its state folders is another user's or writable by others. */
export function checkConfigDir(dir: string): void {
  checkOwnFolder(dir);
  for (const name of STATE_FOLDERS) checkOwnFolder(join(dir, name));
}

/** The temporary file `writeFileAtomic` writes first: `<file>.<pid>.tmp`, so a dead writer's leftovers can be told. */
export const temporaryFileOf = (file: string): string => `${file}.${process.pid}.tmp`;

/** Windows refuses a rename over a file another process has open (EPERM, EACCES, EBUSY): after the retries, this says so. */
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

/** `rename` over `to`, retried on Windows (blocking: the callers are synchronous) while another process holds it open. */
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
 * Writes `contents` to `file` as a 0600 file: a new temporary file (O_EXCL, never through a planted link), fsync,
 * rename over the target, fsync the directory, so a reader sees the old content or the new, never half; a failure
 * leaves no temporary file. Not write-file-atomic: it neither retries the rename Windows refuses while the target is
 * open nor fsyncs the directory. `privateFolder`: the directory through ensurePrivateDirectory.
 */
export function writeFileAtomic(
  file: string,
  contents: string,
  { privateFolder = false, rename }: { privateFolder?: boolean; rename?: RenameOptions } = {},
): void {
  const dir = dirname(file);
  if (privateFolder) ensurePrivateDirectory(dir);
  else ensureDirectory(dir);
  const temp = temporaryFileOf(file);
  try {
    const fd = openNewFile(temp);
    try {
      // A short write (full disk) loops, so the next write reports the error instead of a truncated file renamed in.
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

const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** A new 0600 file at `path`; whatever held the name (a dead writer's leftover, a planted link) is removed first. */
function openNewFile(path: string): number {
  try {
    return openSync(path, NEW_FILE, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    rmSync(path, { force: true });
    return openSync(path, NEW_FILE, 0o600);
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
 * The text of a small file a flag names: a regular file of at most `maxBytes` (a FIFO is refused, never waited on);
 * `privateToUser` (POSIX): also this user's, unreadable by others (it holds a secret). Errors never quote its content.
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
