/** `--header-file <path>`: `--header`s read from a file of the person's own that no one else can read, so a secret is in neither argv (`ps`) nor a synced client config. */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { type CustomHeader, HeaderOptionError, parseHeaderOption } from "./custom-headers.js";

/** A header file holds a few lines; anything larger is not one. */
export const MAX_HEADER_FILE_BYTES = 64 * 1024;

/**
 * The headers of the file at `path`: one `Name: value` a line, `#` comments and blank lines skipped, `${ENV}`
 * expanded as `--header` does. On Linux and macOS the file must be a regular file of this user that group and
 * others can neither read nor write. Errors name the file and the line, never a value.
 */
export function readHeaderFile(
  path: string,
  env: Record<string, string | undefined> = process.env,
  onMissing: (variable: string) => void = () => {},
): CustomHeader[] {
  const text = readOwnFile(path);
  const headers: CustomHeader[] = [];
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const where = `--header-file ${JSON.stringify(path)}, line ${index + 1}`;
    headers.push({ ...parseHeaderOption(trimmed, env, onMissing, where), file: path });
  }
  return headers;
}

function readOwnFile(path: string): string {
  const shown = JSON.stringify(path);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO with no writer is refused below instead of hanging the start.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new HeaderOptionError(
      `--header-file: cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  try {
    // The checks are on the opened file, so a file swapped after them is not the one read.
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new HeaderOptionError(`--header-file: ${shown} is not a regular file`);
    const uid = process.platform === "win32" ? undefined : process.getuid?.();
    if (uid !== undefined) {
      if (stats.uid !== uid)
        throw new HeaderOptionError(
          `--header-file: refusing ${shown}: it belongs to uid ${stats.uid}, not to you (uid ${uid}); ` +
            "keep the headers in a file of your own",
        );
      if (stats.mode & 0o077)
        throw new HeaderOptionError(
          `--header-file: refusing ${shown}: group or other users can read or write it ` +
            `(mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")}); run chmod 600 ${shellWord(path)}`,
        );
    }
    const buffer = Buffer.alloc(MAX_HEADER_FILE_BYTES + 1);
    let length = 0;
    // The file may grow while it is read: never read past the cap.
    while (length < buffer.length) {
      const count = readSync(fd, buffer, length, buffer.length - length, length);
      if (count === 0) break;
      length += count;
    }
    if (length > MAX_HEADER_FILE_BYTES)
      throw new HeaderOptionError(
        `--header-file: ${shown} is larger than ${MAX_HEADER_FILE_BYTES} bytes; it holds "Name: value" lines`,
      );
    return buffer.subarray(0, length).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** `path` as a shell word, for the `chmod` to copy. */
const shellWord = (path: string): string =>
  /^[\w./:@+-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
