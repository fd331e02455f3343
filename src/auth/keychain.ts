/** The OS keychain through one of two optional native modules (keytar, then @napi-rs/keyring on the Secret Service): loaded only here. */
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
export function withinKeychainDeadline<T>(call: Promise<T>): Promise<T> {
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
