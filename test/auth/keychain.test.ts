/** The keychain (src/auth/keychain.ts) as the login store uses it, on an in-memory @napi-rs/keyring: which backend answers, and one bounded read per saved login. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadKeychainBackend } from "../../src/auth/keychain.js";
import { loginKey, loginPaths } from "../../src/auth/login-key.js";
import { LoginStore } from "../../src/auth/login-store.js";
import type { StoredLogin } from "../../src/auth/stored-login.js";
import { scratchDir } from "../support/scratch-dir.js";

/** An in-memory Secret Service: counts reads, and can stop answering. */
const keyring = vi.hoisted(() => ({
  entries: new Map<string, string>(),
  reads: 0,
  silent: false,
  /** The Windows Credential Manager's cap on one credential, in bytes of the UTF-16 @napi-rs/keyring stores. */
  capBytes: Number.POSITIVE_INFINITY,
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
      if (password.length * 2 > keyring.capBytes)
        throw new Error("Attribute 'password' is longer than platform limit of 2560 chars");
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
  keyring.capBytes = Number.POSITIVE_INFINITY;
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

function autoStore(
  configDir: string,
  log: (level: string, message: string) => void = () => {},
  platform: NodeJS.Platform = process.platform,
) {
  const key = loginKey(serverUrl);
  return new LoginStore("auto", key, loginPaths(configDir, key), log, undefined, platform);
}

/** A JWT of about the size identity providers issue (Entra ID access tokens run 1.5-2.5 KB). */
const jwtOf = (bytes: number) =>
  ["eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9", "x".repeat(bytes), "s".repeat(342)].join(".");

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

describe("on Windows, a login with real JWTs in a Credential Manager that caps a credential at 2,560 bytes", () => {
  const bigLogin: StoredLogin = {
    ...login,
    tokens: { ...login.tokens!, accessToken: jwtOf(1_800), refreshToken: jwtOf(1_200) },
  };

  it("is saved in the keychain (in parts), read back whole, and no save warns", async () => {
    keyring.capBytes = 2_560;
    const configDir = scratchDir("cmb-keychain-");
    const warnings: string[] = [];
    const log = (level: string, message: string) => level === "warn" && warnings.push(message);
    const store = autoStore(configDir, log, "win32");
    expect(await store.save(bigLogin)).toBe("keychain");
    expect(await store.save({ ...bigLogin, savedAt: 2 })).toBe("keychain");
    expect(await autoStore(configDir, log, "win32").load()).toEqual({ ...bigLogin, savedAt: 2 });
    expect(warnings).toEqual([]);
    expect([...keyring.entries.values()].every((value) => value.length * 2 <= 2_560)).toBe(true);
  });

  it("a shorter login saved after it leaves no parts behind, and logout deletes every entry", async () => {
    keyring.capBytes = 2_560;
    const configDir = scratchDir("cmb-keychain-");
    const store = autoStore(configDir, () => {}, "win32");
    await store.save(bigLogin);
    expect(keyring.entries.size).toBeGreaterThan(2);
    await store.save(login);
    expect([...keyring.entries.keys()].filter((account) => account.includes(" part "))).toEqual([]);
    expect(await autoStore(configDir, () => {}, "win32").load()).toEqual(login);
    await store.delete();
    expect([...keyring.entries.keys()].filter((account) => account !== "chat-mcp-bridge-probe")).toEqual([]);
  });

  it("a keychain that refuses every save: the file store, with one warning per process, not one per save", async () => {
    keyring.capBytes = 100;
    const configDir = scratchDir("cmb-keychain-");
    const warnings: string[] = [];
    const store = autoStore(
      configDir,
      (level, message) => level === "warn" && warnings.push(message),
      "win32",
    );
    expect(await store.save(bigLogin)).toBe("file");
    expect(await store.save({ ...bigLogin, savedAt: 2 })).toBe("file");
    expect(warnings).toEqual([expect.stringMatching(/refused the login .*a file in your user profile/)]);
    expect(warnings[0]).not.toMatch(/0600/);
  });
});
