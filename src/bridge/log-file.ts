/** The bridge's log file (`--debug`, `--log-file`): one line per event with an ISO timestamp, the pid and the profile, capped in size with one rotation. */
import { closeSync, fstatSync, openSync, renameSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { loginKey } from "../auth/login-key.js";
import { ensureDirectory } from "../internal/files.js";
import { sanitizeForTerminal } from "../internal/redact.js";
import type { BridgeOptions } from "./cli.js";

/** Past this size the file is moved to `<path>.1` (replacing the previous one) and a new one is started. */
export const LOG_FILE_MAX_BYTES = 5 * 1024 * 1024;

/** Where `--debug` writes without `--log-file`: `<configDir>/logs/<server-key>.log`. */
export function defaultLogFilePath(configDir: string, serverKey: string): string {
  return join(configDir, "logs", `${serverKey}.log`);
}

/**
 * The log file for a run: `--log-file`, else with `--debug` the server's default one (the key of its login, so each
 * profile has its own); undefined when neither flag asks for a file.
 */
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
  #fd: number;
  #size: number;

  /** Opens (creating it and its directory, owner-only) the file at `path`; throws when it cannot. */
  constructor(path: string, maxBytes = LOG_FILE_MAX_BYTES, context: { profile?: string } = {}) {
    this.path = path;
    this.#maxBytes = maxBytes;
    this.#profileTag = context.profile
      ? `profile=${sanitizeForTerminal(context.profile, { oneLine: true })} `
      : "";
    ensureDirectory(dirname(path), 0o700);
    this.#fd = openSync(path, "a", 0o600);
    this.#size = fstatSync(this.#fd).size;
  }

  /** Appends one event; control characters in `message` are escaped so an event is always one line. */
  write(level: string, message: string): void {
    const line = `${new Date().toISOString()} pid=${process.pid} ${this.#profileTag}${level} ${sanitizeForTerminal(message, { oneLine: true })}\n`;
    const bytes = Buffer.byteLength(line);
    // Other bridges for the same server may append to the same file: the size on disk decides.
    if (this.#size + bytes > this.#maxBytes && fstatSync(this.#fd).size + bytes > this.#maxBytes)
      this.#rotate();
    try {
      writeSync(this.#fd, line);
      this.#size += bytes;
    } catch {
      // A full disk or a removed directory must not stop the relay.
    }
  }

  close(): void {
    try {
      closeSync(this.#fd);
    } catch {}
  }

  #rotate(): void {
    try {
      renameSync(this.path, `${this.path}.1`);
    } catch {}
    this.close();
    this.#fd = openSync(this.path, "a", 0o600);
    this.#size = fstatSync(this.#fd).size;
  }
}
