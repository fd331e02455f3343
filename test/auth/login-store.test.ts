import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { restServerUrl, storedAccessToken, TokenStoreError } from "../../src/auth/index.js";
import { loginKey, loginPaths } from "../../src/auth/login-key.js";
import { LoginStore, writeFileAtomic } from "../../src/auth/login-store.js";
import type { StoredLogin } from "../../src/auth/stored-login.js";
import { scratchDir } from "../support/scratch-dir.js";

const serverUrl = "http://127.0.0.1:9/mcp";

function sampleLogin(accessToken = "access-1"): StoredLogin {
  return {
    version: 1,
    serverUrl,
    authorizationServerUrl: "http://127.0.0.1:9/",
    resource: serverUrl,
    client: { client_id: "client-1", redirect_uris: ["http://127.0.0.1:20001/callback"], source: "dynamic" },
    tokens: { accessToken, tokenType: "Bearer", refreshToken: "refresh-1", issuedAt: 1, expiresAt: 2 },
    savedAt: 1,
  };
}

function fileStore(configDir: string, log: (level: string, message: string) => void = () => {}) {
  const key = loginKey(serverUrl);
  return new LoginStore("file", key, loginPaths(configDir, key), log);
}

describe("file store permissions", () => {
  it("writes 0600 files in a 0700 directory", async () => {
    const configDir = join(scratchDir("cmb-store-"), "config");
    const store = fileStore(configDir);
    expect(await store.save(sampleLogin())).toBe("file");
    const { dir, file } = store.paths;
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await store.load()).toEqual(sampleLogin());
    expect(await store.describe()).toEqual({ kind: "file", location: file });
  });

  it("tightens an existing directory to 0700", async () => {
    const configDir = scratchDir("cmb-store-");
    mkdirSync(join(configDir, "auth"), { mode: 0o755 });
    const store = fileStore(configDir);
    await store.save(sampleLogin());
    expect(statSync(store.paths.dir).mode & 0o777).toBe(0o700);
  });
});

describe("file store permissions on read (the login holds the tokens and the DPoP key)", () => {
  const withKey = (): StoredLogin => ({
    ...sampleLogin(),
    dpopKey: { alg: "ES256", privateJwk: { kty: "EC", crv: "P-256", x: "x", y: "y", d: "private-d" } },
  });

  it.skipIf(process.platform === "win32")(
    "ignores a login file group or other users can read, with a warning naming chmod, and the next save is 0600",
    async () => {
      const warnings: string[] = [];
      const store = fileStore(scratchDir("cmb-store-"), (_level, message) => warnings.push(message));
      await store.save(withKey());
      chmodSync(store.paths.file, 0o644);
      expect(await store.load()).toBeUndefined();
      expect(warnings.join("\n")).toMatch(/other users can read.*0644.*sign in again/s);
      expect(warnings.join("\n")).not.toContain("private-d");
      await store.save(withKey());
      expect(statSync(store.paths.file).mode & 0o777).toBe(0o600);
      expect(await store.load()).toEqual(withKey());
    },
  );
});

describe("file store atomic writes", () => {
  it("replaces the whole file and leaves no temporary file", async () => {
    const store = fileStore(scratchDir("cmb-store-"));
    await store.save(sampleLogin("access-1"));
    await store.save(sampleLogin("access-2"));
    expect((await store.load())?.tokens?.accessToken).toBe("access-2");
    expect(readdirSync(store.paths.dir)).toEqual([`${store.key}.json`]);
  });

  it("on a failed rename keeps the old content and removes the temporary file", async () => {
    const dir = scratchDir("cmb-store-");
    const target = join(dir, "login.json");
    mkdirSync(join(target, "occupied"), { recursive: true }); // a non-empty directory where the file should go
    const error = await writeFileAtomic(target, "{}").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as Error).message).toMatch(/Could not save the login to .*login\.json/);
    expect(readdirSync(dir)).toEqual(["login.json"]);
  });
});

describe("file store on a directory it cannot write", () => {
  // Tests run as root, where chmod 0500 does not stop writes: the config dir is placed under a regular file,
  // which fails for any user (ENOTDIR), the same code path as a read-only or full disk.
  it("throws TokenStoreError saying what to do, and writes nothing", async () => {
    const base = scratchDir("cmb-store-");
    writeFileSync(join(base, "not-a-dir"), "x");
    const store = fileStore(join(base, "not-a-dir", "config"));
    const error = await store.save(sampleLogin()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
    expect((error as Error).message).toMatch(/not a directory.*CHAT_CONFIG_DIR/s);
    expect(readdirSync(base)).toEqual(["not-a-dir"]);
  });

  it("reports a read-only file system clearly (/proc)", async () => {
    const error = await writeFileAtomic("/proc/cmb-test/login.json", "{}").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenStoreError);
  });
});

describe("file store while another process holds the login file (Windows)", () => {
  it("says another process has it open, not that permission is denied or the disk is full", async () => {
    const dir = scratchDir("cmb-store-");
    const held = (_from: string, _to: string) => {
      throw Object.assign(new Error("EPERM: operation not permitted, rename"), { code: "EPERM" });
    };
    const saving = writeFileAtomic(join(dir, "auth", "login.json"), "{}", {
      platform: "win32",
      rename: held,
      pause: () => {},
    });
    await expect(saving).rejects.toThrow(TokenStoreError);
    await expect(saving).rejects.toThrow(/another process has the file open .*Try again/);
    await expect(saving).rejects.not.toThrow(/permission denied|disk space/);
  });
});

describe("file store with a corrupted file", () => {
  for (const [name, content] of [
    ["not JSON", "{ half-written"],
    ["wrong shape", JSON.stringify({ version: 1, serverUrl, tokens: { accessToken: 42 } })],
  ] as const) {
    it(`ignores it (${name}) with a warning`, async () => {
      const warnings: string[] = [];
      const store = fileStore(scratchDir("cmb-store-"), (level, message) => {
        if (level === "warn") warnings.push(message);
      });
      mkdirSync(store.paths.dir, { recursive: true });
      writeFileSync(store.paths.file, content, { mode: 0o600 });
      expect(await store.load()).toBeUndefined();
      expect(warnings.join("\n")).toMatch(/corrupted login file/);
    });
  }
});

describe("stored logins never contain the package version and are keyed by server and header names", () => {
  it("keys differ by header names but not by their order or case", () => {
    expect(loginKey(serverUrl, ["X-Team", "X-Env"])).toBe(loginKey(serverUrl, ["x-env", "x-team"]));
    expect(loginKey(serverUrl, ["X-Team"])).not.toBe(loginKey(serverUrl));
    expect(loginKey(`${serverUrl}#frag`)).toBe(loginKey(serverUrl));
  });

  it("writes no version of the package into the record", async () => {
    const store = fileStore(scratchDir("cmb-store-"));
    await store.save(sampleLogin());
    const text = readFileSync(store.paths.file, "utf8");
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    expect(text).not.toContain(version);
  });
});

describe("stored REST login (chat-cli convention)", () => {
  it("is the protected resource <base>/v2", () => {
    expect(restServerUrl("http://127.0.0.1:8787/")).toBe("http://127.0.0.1:8787/v2");
  });

  it("storedAccessToken is undefined when nobody signed in, without any network or keychain", async () => {
    const env = { CHAT_CONFIG_DIR: scratchDir("cmb-store-") };
    const fetch = () => Promise.reject(new Error("no network expected"));
    expect(await storedAccessToken("http://127.0.0.1:9", { env, fetch })).toBeUndefined();
  });
});
