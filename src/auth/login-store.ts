/** Where logins are kept: the OS keychain (keytar, then @napi-rs/keyring), else private files (0600 on POSIX). */

import { constants, type Stats } from "node:fs";
import { chmod, open, readFile, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import {
  ensurePrivateDirectory,
  FileInUseError,
  type RenameOptions,
  UntrustedFolderError,
  writeFileAtomic as writeFileAtomicSync,
} from "../internal/files.js";
import { TokenStoreError } from "./errors.js";
import {
  deleteInParts,
  getInParts,
  KEYCHAIN_BACKENDS,
  type KeychainBackend,
  keychainEntryChars,
  loadKeychainBackend,
  loadNamedBackend,
  setInParts,
} from "./keychain.js";
import { KEYCHAIN_SERVICE, type LoginPaths } from "./login-key.js";
import { parseStoredLogin, type StoredLogin } from "./stored-login.js";

export type TokenStoreMode = "auto" | "keychain" | "file";
export type AuthLog = (level: "info" | "warn" | "debug", message: string) => void;

/** One login's storage, following the `--token-store` mode. */
export class LoginStore {
  #keychain?: ReturnType<typeof loadKeychainBackend>;
  #warnedFallback = false;
  #warnedRefusal = false;
  /** The backend a pointer file named, once loaded (dropped again when it does not answer). */
  #named?: Promise<KeychainBackend>;
  /** The identity of the login file and keychain pointer when this store last read or wrote them. */
  #seen?: string;

  constructor(
    readonly mode: TokenStoreMode,
    readonly key: string,
    readonly paths: LoginPaths,
    private readonly log: AuthLog = () => {},
    private readonly backendOrder: readonly KeychainBackend["name"][] = KEYCHAIN_BACKENDS,
    /** Whose keychain and file rules apply (another platform's, in tests). */
    private readonly platform: NodeJS.Platform = process.platform,
  ) {}

  /** The saved login, or undefined when there is none or it cannot be read (with a warning saying why). */
  async load(): Promise<StoredLogin | undefined> {
    // Taken before reading: a save racing with this read shows as a change at the next check.
    this.#seen = await this.#fileIdentity();
    if (this.mode === "file") return this.#readFile();
    if (this.mode === "keychain") {
      const backend = await this.#requireKeychain();
      return this.#parseKeychainLogin(await getInParts(backend, this.key), backend);
    }
    const pointer = await this.#readPointer();
    if (!pointer) return this.#readFile();
    let text: string | null;
    let backend: KeychainBackend;
    try {
      // The backend the pointer names, without trying the others; the bounded read of the login itself proves
      // the keychain answers (a bridge start with a saved login makes one keychain call, not a probe and a read).
      this.#named ??= loadNamedBackend(pointer.backend);
      backend = await this.#named;
      text = await getInParts(backend, this.key);
    } catch (error) {
      this.#named = undefined;
      this.log(
        "warn",
        `The saved login is in the keychain (${pointer.backend}), which does not answer (${errorMessage(error)}); ` +
          "using the file store instead.",
      );
      return this.#readFile();
    }
    return this.#parseKeychainLogin(text, backend);
  }

  #parseKeychainLogin(text: string | null, backend: KeychainBackend): StoredLogin | undefined {
    if (text === null) return undefined;
    const login = parseStoredLogin(text);
    if (!login)
      this.log("warn", `Ignoring an unreadable login in the keychain (${backend.name}); sign in again.`);
    return login;
  }

  /** Saves atomically and says where it went. Throws TokenStoreError with what to do when nothing can hold it. */
  async save(login: StoredLogin): Promise<"keychain" | "file"> {
    try {
      return await this.#save(login);
    } finally {
      this.#seen = await this.#fileIdentity();
    }
  }

  /**
   * True when another process may have saved (or deleted) the login since this store last read or wrote it.
   * Judged from the metadata of the login file and the keychain pointer, which every save replaces, so it
   * costs two `stat`s and never a keychain read.
   */
  async changedSinceSeen(): Promise<boolean> {
    return this.#seen === undefined || (await this.#fileIdentity()) !== this.#seen;
  }

  async #fileIdentity(): Promise<string> {
    const identity = (path: string) =>
      stat(path).then(
        ({ ino, mtimeMs, size }) => `${ino}:${mtimeMs}:${size}`,
        () => "none",
      );
    return (await Promise.all([this.paths.file, this.paths.keychainPointer].map(identity))).join(" ");
  }

  async #save(login: StoredLogin): Promise<"keychain" | "file"> {
    const text = JSON.stringify(login);
    if (this.mode !== "file") {
      // The fallback is news once: when a login (tokens, not only the client registration) is first saved.
      const firstLogin = login.tokens !== undefined && !(await this.#fileHoldsTokens());
      const backend = await this.#keychainOrFallback(firstLogin);
      if (backend) {
        try {
          await setInParts(backend, this.key, text, keychainEntryChars(this.platform));
          // The server URL (no secret) lets `logout` list the stored logins without opening the keychain.
          await writeFileAtomic(
            this.paths.keychainPointer,
            JSON.stringify({
              backend: backend.name,
              serverUrl: login.serverUrl,
              ...(login.profile ? { profile: login.profile } : {}),
            }),
          );
          await rm(this.paths.file, { force: true });
          return "keychain";
        } catch (error) {
          if (error instanceof TokenStoreError) throw error;
          if (this.mode === "keychain") {
            throw new TokenStoreError(`Could not save the login in the keychain (${errorMessage(error)}).`);
          }
          // Once per process: a keychain that refuses one save refuses the next, and the file store is then the plan.
          this.log(
            this.#warnedRefusal ? "debug" : "warn",
            `The keychain refused the login (${errorMessage(error)}); saving it in ${privateFile(this.platform)}.`,
          );
          this.#warnedRefusal = true;
        }
      }
    }
    await writeFileAtomic(this.paths.file, text);
    await this.#forgetKeychainCopy();
    return "file";
  }

  /** Deletes the login from every place it may be. */
  async delete(): Promise<void> {
    await rm(this.paths.file, { force: true });
    await this.#forgetKeychainCopy();
    this.#seen = await this.#fileIdentity();
  }

  async describe(): Promise<{ kind: "keychain" | "file" | "none"; location: string }> {
    const pointer = await this.#readPointer();
    if (pointer && this.mode !== "file") {
      return {
        kind: "keychain",
        location: `${pointer.backend} (service "${KEYCHAIN_SERVICE}", account "${this.key}")`,
      };
    }
    if (
      this.mode !== "keychain" &&
      (await stat(this.paths.file).then(
        () => true,
        () => false,
      ))
    )
      return { kind: "file", location: this.paths.file };
    return { kind: "none", location: "" };
  }

  async #requireKeychain(): Promise<KeychainBackend> {
    const { backend, failures } = await this.#loadKeychain();
    if (backend) return backend;
    throw new TokenStoreError(
      `No keychain is available (${failures.join("; ")}). Start a Secret Service (e.g. gnome-keyring) ` +
        "or use --token-store file.",
    );
  }

  /** True when the login file already holds tokens (a refresh or a second sign-in saves over it). */
  async #fileHoldsTokens(): Promise<boolean> {
    try {
      return parseStoredLogin(await readFile(this.paths.file, "utf8"))?.tokens !== undefined;
    } catch {
      return false;
    }
  }

  async #keychainOrFallback(announce: boolean): Promise<KeychainBackend | undefined> {
    if (this.mode === "keychain") return this.#requireKeychain();
    const { backend, failures, installed } = await this.#loadKeychain();
    if (!backend && announce && !this.#warnedFallback) {
      this.#warnedFallback = true;
      // The details (module paths, native errors) are for --debug; the user hears only what they can act on,
      // and nothing at all when no keychain module is installed (the file store is then the plan, not a fallback).
      this.log("debug", `No keychain answered (${failures.join("; ")}).`);
      if (installed.length > 0) {
        const which =
          installed.includes("napi-keyring") && this.platform === "linux"
            ? "the Secret Service (e.g. gnome-keyring)"
            : "the keychain";
        this.log(
          "warn",
          `No keychain answered; the login is saved in ${privateFile(this.platform)} under ${this.paths.dir}. ` +
            `Start ${which}, or pass --token-store file to skip it.`,
        );
      }
    }
    return backend;
  }

  #loadKeychain() {
    this.#keychain ??= loadKeychainBackend(this.backendOrder);
    return this.#keychain;
  }

  async #readPointer(): Promise<{ backend: KeychainBackend["name"] } | undefined> {
    try {
      const value = JSON.parse(await readFile(this.paths.keychainPointer, "utf8")) as { backend?: unknown };
      return value.backend === "keytar" || value.backend === "napi-keyring"
        ? { backend: value.backend }
        : undefined;
    } catch {
      return undefined;
    }
  }

  async #forgetKeychainCopy(): Promise<void> {
    const pointer = await this.#readPointer();
    if (!pointer) return;
    try {
      await deleteInParts(await loadNamedBackend(pointer.backend), this.key);
    } catch (error) {
      this.log("warn", `Could not delete the login from the keychain (${errorMessage(error)}).`);
    }
    await rm(this.paths.keychainPointer, { force: true });
  }

  async #readFile(): Promise<StoredLogin | undefined> {
    let text: string;
    try {
      // Never through a link: its target's owner and mode are not the login's.
      const handle = await open(this.paths.file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
      try {
        // Checked on the opened file: the tokens and the DPoP key are only as private as it is.
        const problem = exposure(await handle.stat());
        if (problem) {
          this.log(
            "warn",
            `Ignoring the saved login ${this.paths.file}: ${problem}, so its tokens and DPoP key may have been ` +
              "copied; sign in again (the new login is written 0600, and a new DPoP key made).",
          );
          return undefined;
        }
        text = await handle.readFile("utf8");
      } finally {
        await handle.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      this.log("warn", `Could not read the saved login ${this.paths.file} (${describeFsError(error)}).`);
      return undefined;
    }
    const login = parseStoredLogin(text);
    if (!login) this.log("warn", `Ignoring the corrupted login file ${this.paths.file}; sign in again.`);
    return login;
  }
}

/**
 * Writes `content` to `path` as a 0600 file in a 0700 directory, atomically (see src/internal/files.ts).
 * Failures (read-only or full disk) leave nothing behind.
 */
export async function writeFileAtomic(path: string, content: string, rename?: RenameOptions): Promise<void> {
  try {
    ensurePrivateDirectory(dirname(path));
    await chmod(dirname(path), 0o700);
    writeFileAtomicSync(path, content, { rename });
  } catch (error) {
    if (error instanceof UntrustedFolderError) throw new TokenStoreError(error.message);
    throw new TokenStoreError(
      error instanceof FileInUseError
        ? `Could not save the login to ${path}: ${describeFsError(error)} (another chat-mcp-bridge or chat-cli ` +
            "saving at the same moment, or a virus scanner or backup tool). Try again; if it persists, close " +
            "the program that holds the file."
        : `Could not save the login to ${path}: ${describeFsError(error)}. Free some disk space, or point ` +
            "$CHAT_CONFIG_DIR at a writable directory, or use --token-store keychain.",
    );
  }
}

/**
 * What keeps a login file private on `platform`: its 0600 mode on POSIX systems; on Windows, where file modes do
 * nothing, the permissions of the user's profile folder the config folder sits in.
 */
export function privateFile(platform: NodeJS.Platform = process.platform): string {
  return platform === "win32"
    ? "a file in your user profile (private to your Windows account through the profile folder's permissions)"
    : "a 0600 file";
}

const FS_ERRORS: Record<string, string> = {
  EROFS: "the file system is read-only",
  ENOSPC: "the disk is full",
  EDQUOT: "the disk is full",
  EACCES: "permission denied",
  EPERM: "permission denied",
  ENOTDIR: "a parent of it is not a directory",
  ENOENT: "its directory cannot be created there",
  EISDIR: "a directory is in the way",
  EFILEINUSE: "another process has the file open",
};

export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const known = code && FS_ERRORS[code];
  if (known) return known;
  // Node's own messages already open with the code ("EFBIG: file too large, write"): say it once.
  return code && !errorMessage(error).startsWith(code)
    ? `${code}: ${errorMessage(error)}`
    : errorMessage(error);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Why a login file may not be trusted (Linux, macOS): another user's, or readable or writable by group or others, as
 * `--client-private-key` files are judged. Undefined when it is the user's own 0600 file (and always on Windows, where
 * the profile folder's permissions protect it).
 */
function exposure(stats: Stats): string | undefined {
  if (process.platform === "win32") return undefined;
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid)
    return `it belongs to uid ${stats.uid}, not to you (uid ${uid})`;
  if (stats.mode & 0o077) {
    return `group or other users can read or write it (mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")})`;
  }
  return undefined;
}
