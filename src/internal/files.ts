/** File helpers of the parts that keep state on disk: mkdir -p that cannot hang, atomic writes, is-this-pid-alive. */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * `mkdir -p` that fails instead of spinning: Node 20's `mkdirSync(dir, { recursive: true })` loops forever when
 * mkdir answers ENOENT under an existing parent (e.g. anywhere under /proc). `mode` applies to what it creates.
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
 * Writes `contents` to `file` as a 0600 file: a temporary file, fsync, rename over the target, fsync the directory,
 * so a crash or a reader sees the old content or the new, never half. A failure (full disk, file too large)
 * leaves no temporary file behind. The directory is created (with `dirMode`) when missing.
 */
export function writeFileAtomic(
  file: string,
  contents: string,
  { dirMode }: { dirMode?: number } = {},
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
    renameSync(temp, file);
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
