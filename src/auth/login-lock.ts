/** A cross-process lock file per login, so one process at a time signs in or spends the refresh token. */
// Ours, not proper-lockfile (4.1.2, the maintained choice), for three reasons measured in bench/HISTORY.md: its lock
// is a `<file>.lock` folder, which an installed older chat-cli or bridge (this JSON file) would not see, so both
// would spend one refresh token; it knows no holder's pid, so the lock of a crashed sign-in is taken over only once
// its mtime is stale (default 10 s, at least 2 s, and a holder whose heartbeat is late then loses it), where the pid
// check takes it at once; and it would install 4 packages (graceful-fs, retry, signal-exit) for that.
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { type FileHandle, lstat, open, readFile, rm, stat, utimes } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensurePrivateDirectory, isProcessAlive, UntrustedFolderError } from "../internal/files.js";
import { TokenStoreError } from "./errors.js";
import { describeFsError } from "./login-store.js";

export interface LockOptions {
  /** Give up waiting for another holder after this long. */
  waitMs: number;
  /** A lock whose holder is dead, or whose heartbeat is older than this, is taken over. Default 30 s. */
  staleMs?: number;
  /** Called once when the lock is busy, so callers can say what they wait for. */
  onWait?: () => void;
}

interface LockContent {
  pid: number;
  token: string;
  createdAt: number;
}

/** Runs `task` while holding the lock file at `path`; the lock is released however `task` ends. */
export async function withLoginLock<T>(
  path: string,
  options: LockOptions,
  task: () => Promise<T>,
): Promise<T> {
  const release = await acquireLoginLock(path, options);
  try {
    return await task();
  } finally {
    await release();
  }
}

/** Acquires the lock, waiting for (or recovering from) another holder; resolves with the release function. */
export async function acquireLoginLock(path: string, options: LockOptions): Promise<() => Promise<void>> {
  const staleMs = options.staleMs ?? 30_000;
  const deadline = Date.now() + options.waitMs;
  const content: LockContent = { pid: process.pid, token: randomUUID(), createdAt: Date.now() };
  let announced = false;
  try {
    ensurePrivateDirectory(dirname(path));
  } catch (error) {
    if (error instanceof UntrustedFolderError) throw new TokenStoreError(error.message);
    throw new TokenStoreError(`Could not create ${dirname(path)}: ${describeFsError(error)}.`);
  }
  for (;;) {
    if (await tryCreate(path, content)) return holdLock(path, content, staleMs);
    if (await isStale(path, staleMs)) {
      await reapStaleLock(path, staleMs);
      continue;
    }
    if (Date.now() > deadline) {
      throw new TokenStoreError(
        `Timed out waiting for another process signing in (lock ${path}); try again, or delete that file if no ` +
          "other chat-mcp-bridge or chat-cli process is running.",
      );
    }
    if (!announced) {
      announced = true;
      options.onWait?.();
    }
    await sleep(40 + Math.random() * 60);
  }
}

async function tryCreate(path: string, content: LockContent): Promise<boolean> {
  let handle: FileHandle;
  try {
    handle = await open(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new TokenStoreError(`Could not create the lock file ${path}: ${describeFsError(error)}.`);
  }
  try {
    await handle.writeFile(JSON.stringify(content));
    await handle.close();
  } catch (error) {
    // An empty lock file names no holder and would hold every other process off until it turns stale.
    await handle.close().catch(() => {});
    await rm(path, { force: true }).catch(() => {});
    throw new TokenStoreError(`Could not write the lock file ${path}: ${describeFsError(error)}.`);
  }
  return true;
}

function holdLock(path: string, content: LockContent, staleMs: number): () => Promise<void> {
  // The heartbeat keeps a long sign-in (the user is in the browser) from looking stale to the waiters.
  const heartbeat = setInterval(
    () => {
      const now = new Date();
      utimes(path, now, now).catch(() => {});
    },
    Math.max(100, Math.floor(staleMs / 3)),
  );
  heartbeat.unref();
  releaseAtExit(path, content.token);
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    clearInterval(heartbeat);
    heldLocks.delete(path);
    const current = await readLock(path);
    if (current?.token === content.token) await rm(path, { force: true });
  };
}

/** The locks this process holds (path -> token): released by `process.exit` too (a Ctrl-C during a sign-in). */
const heldLocks = new Map<string, string>();

function releaseAtExit(path: string, token: string): void {
  if (heldLocks.size === 0 && !process.listeners("exit").includes(releaseHeldLocks))
    process.on("exit", releaseHeldLocks);
  heldLocks.set(path, token);
}

/** At exit only synchronous work runs: each lock file is removed if it still holds this process's token. */
function releaseHeldLocks(): void {
  for (const [path, token] of heldLocks) {
    try {
      if ((JSON.parse(readFileSync(path, "utf8")) as Partial<LockContent>).token === token) rmSync(path);
    } catch {
      // Already gone, or taken over by another process.
    }
  }
  heldLocks.clear();
}

async function readLock(path: string): Promise<LockContent | undefined> {
  try {
    const value = JSON.parse(await readFile(path, "utf8")) as Partial<LockContent>;
    if (typeof value.pid === "number" && typeof value.token === "string") return value as LockContent;
  } catch {
    // Absent, or being written right now.
  }
  return undefined;
}

/**
 * Stale: the holder's process is gone, or the heartbeat stopped more than `staleMs` ago. A lock that is not this
 * user's, or whose heartbeat is in the future, is no live holder's either: anyone could write its pid and mtime.
 */
export async function isStale(path: string, staleMs: number): Promise<boolean> {
  let modifiedAt: number;
  let owner: number;
  try {
    ({ mtimeMs: modifiedAt, uid: owner } = await lstat(path));
  } catch {
    return false; // Released meanwhile: the next attempt will take it.
  }
  const uid = process.platform === "win32" ? undefined : process.getuid?.();
  if (uid !== undefined && owner !== uid) return true;
  if (Math.abs(Date.now() - modifiedAt) > staleMs) return true;
  const holder = await readLock(path);
  return holder !== undefined && !isProcessAlive(holder.pid);
}

// Two waiters may judge the same lock stale; the `.reap` file lets only one of them remove it, and only
// if it is still the lock that was judged stale (not a fresh one taken meanwhile).
async function reapStaleLock(path: string, staleMs: number): Promise<void> {
  const reapPath = `${path}.reap`;
  const before = await readLock(path);
  try {
    const handle = await open(reapPath, "wx", 0o600);
    await handle.close();
  } catch {
    if (await isOlderThan(reapPath, 10_000)) await rm(reapPath, { force: true });
    await sleep(20 + Math.random() * 30);
    return;
  }
  try {
    const now = await readLock(path);
    if (now?.token === before?.token && (await isStale(path, staleMs))) await rm(path, { force: true });
  } finally {
    await rm(reapPath, { force: true });
  }
}

async function isOlderThan(path: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs > ms;
  } catch {
    return false;
  }
}
