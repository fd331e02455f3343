/** The keychain (src/auth/keychain.ts) as the login store uses it, on an in-memory @napi-rs/keyring: which backend answers, and one bounded read per saved login. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadKeychainBackend } from "../../src/auth/keychain.js";
import { loginKey, loginPaths } from "../../src/auth/login-key.js";
import type { StoredLogin } from "../../src/auth/stored-login.js";
import { LoginStore } from "../../src/auth/token-store.js";
import { scratchDir } from "../support/scratch-dir.js";

/** An in-memory Secret Service: counts reads, and can stop answering. */
const keyring = vi.hoisted(() => ({
  entries: new Map<string, string>(),
  reads: 0,
  silent: false,
}));

/** The in-memory @napi-rs/keyring: its one class, as src/auth/keychain.ts uses it. */
const fakeNapiKeyring = vi.hoisted(() => ({
  AsyncEntry: class {
    constructor(
      readonly service: string,
      readonly account: string,
    ) {}
    getPassword(): Promise<string | undefined> {
      keyring.reads++;
      if (keyring.silent) return new Promise(() => {});
      return Promise.resolve(keyring.entries.get(this.account));
    }
    async setPassword(password: string): Promise<void> {
      keyring.entries.set(this.account, password);
    }
    async deleteCredential(): Promise<boolean> {
      return keyring.entries.delete(this.account);
    }
  },
}));

// The keychain modules are CommonJS and load through createRequire: keytar is absent, @napi-rs/keyring is the fake.
vi.mock("node:module", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:module")>();
  const createRequire = (from: string | URL) => {
    const real = actual.createRequire(from);
    return Object.assign((id: string) => {
      if (id === "keytar")
        throw Object.assign(new Error("Cannot find module 'keytar'"), { code: "MODULE_NOT_FOUND" });
      if (id === "@napi-rs/keyring") return fakeNapiKeyring;
      return real(id);
    }, real);
  };
  return { ...actual, createRequire, default: { ...actual, createRequire } };
});

afterEach(() => {
  keyring.entries.clear();
  keyring.reads = 0;
  keyring.silent = false;
  vi.useRealTimers();
});

const serverUrl = "http://127.0.0.1:9/mcp";
const login: StoredLogin = {
  version: 1,
  serverUrl,
  authorizationServerUrl: "http://127.0.0.1:9/",
  resource: serverUrl,
  client: { client_id: "client-1", redirect_uris: ["http://127.0.0.1:20001/callback"], source: "dynamic" },
  tokens: {
    accessToken: "access-1",
    tokenType: "Bearer",
    refreshToken: "refresh-1",
    issuedAt: 1,
    expiresAt: 2,
  },
  savedAt: 1,
};

function autoStore(configDir: string, log: (level: string, message: string) => void = () => {}) {
  const key = loginKey(serverUrl);
  return new LoginStore("auto", key, loginPaths(configDir, key), log);
}

describe("which keychain backend answers", () => {
  it("keytar first; when it cannot load, @napi-rs/keyring, and the reason keytar failed", async () => {
    const { backend, failures, installed } = await loadKeychainBackend();
    expect(backend?.name).toBe("napi-keyring");
    expect(installed).toEqual(["napi-keyring"]);
    expect(failures).toEqual([expect.stringMatching(/^keytar: /)]);
  });
});

describe("a login saved in the keychain, read by a later process", () => {
  it("is read back with one keychain call: the read itself proves the keychain answers", async () => {
    const configDir = scratchDir("cmb-keychain-");
    expect(await autoStore(configDir).save(login)).toBe("keychain");
    keyring.reads = 0;
    const later = autoStore(configDir);
    expect(await later.load()).toEqual(login);
    expect(keyring.reads).toBe(1);
  });

  it("a keychain that does not answer: the file store instead, with a warning, after the bounded wait", async () => {
    const configDir = scratchDir("cmb-keychain-");
    await autoStore(configDir).save(login);
    keyring.reads = 0;
    keyring.silent = true;
    const warnings: string[] = [];
    const later = autoStore(configDir, (level, message) => {
      if (level === "warn") warnings.push(message);
    });
    // Only setTimeout is faked: the file reads before the keychain call still run, on setImmediate turns.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let settled = false;
    const loaded = later.load().finally(() => {
      settled = true;
    });
    while (!settled) {
      await new Promise((turn) => setImmediate(turn));
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(await loaded).toBeUndefined();
    expect(keyring.reads).toBe(1);
    expect(warnings).toEqual([expect.stringMatching(/keychain \(napi-keyring\), which does not answer/)]);
  });
});
