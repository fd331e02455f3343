/** The OS keychain through one of two optional native modules (keytar, then @napi-rs/keyring on the Secret Service), loaded only here, and a login too long for one entry kept across several. */
import { createRequire } from "node:module";
import { withinDeadline } from "../internal/deadline.js";
import { KEYCHAIN_SERVICE } from "./login-key.js";

/** A keychain reached through one native module. */
export interface KeychainBackend {
  readonly name: "keytar" | "napi-keyring";
  get(account: string): Promise<string | null>;
  set(account: string, value: string): Promise<void>;
  delete(account: string): Promise<void>;
}

const KEYCHAIN_TIMEOUT_MS = 5_000;
/** keytar first (the user's choice), then @napi-rs/keyring. */
export const KEYCHAIN_BACKENDS: readonly KeychainBackend["name"][] = ["keytar", "napi-keyring"];

/** The first keychain backend that answers, or the reasons none did. Native modules load only here. */
export async function loadKeychainBackend(
  order: readonly KeychainBackend["name"][] = KEYCHAIN_BACKENDS,
): Promise<{ backend?: KeychainBackend; failures: string[]; installed: KeychainBackend["name"][] }> {
  const failures: string[] = [];
  /** Backends whose module loads (their daemon may still not answer). */
  const installed: KeychainBackend["name"][] = [];
  for (const name of order) {
    try {
      const backend = await loadNamedBackend(name);
      installed.push(name);
      // A read of an absent entry proves the keychain daemon answers (and is unlocked enough to read).
      await withinKeychainDeadline(backend.get("chat-mcp-bridge-probe"));
      return { backend, failures, installed };
    } catch (error) {
      failures.push(`${name === "keytar" ? "keytar" : "@napi-rs/keyring"}: ${errorMessage(error)}`);
    }
  }
  return { failures, installed };
}

/** A backend by name (the one a pointer file names), without trying the others. */
export async function loadNamedBackend(name: KeychainBackend["name"]): Promise<KeychainBackend> {
  return name === "keytar" ? loadKeytar() : loadNapiKeyring();
}

/** The three keytar functions used: keytar is an optional peer, so the build never needs its types. */
interface KeytarModule {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
}

/** The one @napi-rs/keyring class used, declared here so the build never needs the optional package. */
interface NapiKeyringModule {
  AsyncEntry: new (
    service: string,
    account: string,
    options?: { linux?: { store?: "secret-service" } },
  ) => {
    getPassword(): Promise<string | null | undefined>;
    setPassword(password: string): Promise<void>;
    deleteCredential(): Promise<boolean>;
  };
}

/**
 * Loads an optional module by a name held in a variable, so neither tsc nor the bundler resolves it at build
 * time: a clone or install without it builds, and the load fails here at run time instead. Both keychain modules
 * are CommonJS native modules, which `require` loads as they are written.
 */
async function loadOptional(name: string): Promise<unknown> {
  return createRequire(import.meta.url)(name);
}

async function loadKeytar(): Promise<KeychainBackend> {
  const keytar = (await loadOptional("keytar")) as KeytarModule;
  return {
    name: "keytar",
    get: (account) => keytar.getPassword(KEYCHAIN_SERVICE, account),
    set: (account, value) => keytar.setPassword(KEYCHAIN_SERVICE, account, value),
    delete: async (account) => {
      await keytar.deletePassword(KEYCHAIN_SERVICE, account);
    },
  };
}

async function loadNapiKeyring(): Promise<KeychainBackend> {
  const { AsyncEntry } = (await loadOptional("@napi-rs/keyring")) as NapiKeyringModule;
  // Pinned to the Secret Service on Linux: the default falls back to the kernel keyring, which is lost on reboot.
  const entry = (account: string) =>
    new AsyncEntry(KEYCHAIN_SERVICE, account, { linux: { store: "secret-service" } });
  return {
    name: "napi-keyring",
    get: async (account) => (await entry(account).getPassword()) ?? null,
    set: (account, value) => entry(account).setPassword(value),
    delete: async (account) => {
      await entry(account).deleteCredential();
    },
  };
}

/** One keychain call bounded in time: a Secret Service that does not answer must not hold the caller up. */
function withinKeychainDeadline<T>(call: Promise<T>): Promise<T> {
  return withinDeadline(call, KEYCHAIN_TIMEOUT_MS, `no answer within ${KEYCHAIN_TIMEOUT_MS / 1000} s`, {
    unref: true,
  });
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // A module that is not installed: "Cannot find module 'keytar'", without the require stack's file paths.
  return (error as NodeJS.ErrnoException).code === "MODULE_NOT_FOUND"
    ? error.message.split("\n")[0]!
    : error.message;
}

// A login too long for one keychain entry (Windows Credential Manager: 2,560 bytes) is kept across several entries.

/**
 * The longest text one entry holds on each platform. Windows caps a credential's blob at 2,560 bytes, and
 * @napi-rs/keyring stores it as UTF-16 (two bytes a character; keytar's UTF-8 takes one for our ASCII JSON): 1,200
 * characters fit both with room to spare. The macOS keychain and the Secret Service take a whole login.
 */
export function keychainEntryChars(platform: NodeJS.Platform = process.platform): number {
  return platform === "win32" ? 1_200 : Number.POSITIVE_INFINITY;
}

/** What the first entry holds when the text is in parts: this marker and the count (never valid login JSON). */
const PARTS_MARKER = "chat-mcp-bridge parts:";
const MAX_PARTS = 64;
const partAccount = (account: string, index: number) => `${account} part ${index}`;

/**
 * Saves `text` under `account`, in one entry when it fits, else in numbered parts written before the entry that
 * counts them, so a reader never finds a count whose parts are missing. Parts a longer earlier save left are deleted.
 */
export async function setInParts(
  backend: KeychainBackend,
  account: string,
  text: string,
  limit: number,
): Promise<void> {
  const before = partCount(await withinKeychainDeadline(backend.get(account)));
  if (text.length <= limit) {
    await withinKeychainDeadline(backend.set(account, text));
    await deletePartsFrom(backend, account, 0, before);
    return;
  }
  const count = Math.ceil(text.length / limit);
  if (count > MAX_PARTS)
    throw new Error(`the login is too long for the keychain (${text.length} characters)`);
  for (let index = 0; index < count; index++)
    await withinKeychainDeadline(
      backend.set(partAccount(account, index), text.slice(index * limit, (index + 1) * limit)),
    );
  await withinKeychainDeadline(backend.set(account, `${PARTS_MARKER}${count}`));
  await deletePartsFrom(backend, account, count, before);
}

/** The text saved under `account` (one entry, or its parts joined), or null when there is none or a part is gone. */
export async function getInParts(backend: KeychainBackend, account: string): Promise<string | null> {
  const first = await withinKeychainDeadline(backend.get(account));
  const count = partCount(first);
  if (count === 0) return first;
  const parts: string[] = [];
  for (let index = 0; index < count; index++) {
    const part = await withinKeychainDeadline(backend.get(partAccount(account, index)));
    if (part === null) return null;
    parts.push(part);
  }
  return parts.join("");
}

/** Deletes the entry under `account` and any parts it counts. */
export async function deleteInParts(backend: KeychainBackend, account: string): Promise<void> {
  const count = partCount(await withinKeychainDeadline(backend.get(account)));
  await withinKeychainDeadline(backend.delete(account));
  await deletePartsFrom(backend, account, 0, count);
}

async function deletePartsFrom(
  backend: KeychainBackend,
  account: string,
  from: number,
  to: number,
): Promise<void> {
  for (let index = from; index < to; index++)
    await withinKeychainDeadline(backend.delete(partAccount(account, index)));
}

function partCount(text: string | null): number {
  if (!text?.startsWith(PARTS_MARKER)) return 0;
  const count = Number(text.slice(PARTS_MARKER.length));
  return Number.isInteger(count) && count > 0 && count <= MAX_PARTS ? count : 0;
}
