/** The session's login as stored (src/auth/session/context.ts): this server's only, strict or in-memory saves, secrets kept out of messages. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TokenStoreError } from "../../../src/auth/errors.js";
import { loginKey, loginPaths } from "../../../src/auth/login-key.js";
import { LoginStore } from "../../../src/auth/login-store.js";
import { SessionStorage } from "../../../src/auth/session/context.js";
import type { StoredLogin } from "../../../src/auth/stored-login.js";
import { redact } from "../../../src/internal/redact.js";
import { scratchDir } from "../../support/scratch-dir.js";

const serverUrl = "http://127.0.0.1:9/mcp";

function loginFor(url: string, accessToken = "access-storage-0123456789"): StoredLogin {
  return {
    version: 1,
    serverUrl: url,
    authorizationServerUrl: "http://127.0.0.1:9/",
    resource: url,
    client: { client_id: "client-1", redirect_uris: [], source: "dynamic" },
    tokens: { accessToken, tokenType: "Bearer", issuedAt: 1, expiresAt: Date.now() + 60_000 },
    savedAt: 1,
  };
}

function storageIn(configDir: string, warnings: string[] = []) {
  const key = loginKey(serverUrl);
  const store = new LoginStore("file", key, loginPaths(configDir, key));
  return new SessionStorage(store, serverUrl, (level, message) => {
    if (level === "warn") warnings.push(message);
  });
}

describe("reading back", () => {
  it("a saved login for this server is read back; one saved for another server URL counts as none", async () => {
    const configDir = join(scratchDir("cmb-storage-"), "config");
    await storageIn(configDir).persist(loginFor(serverUrl), true);
    expect((await storageIn(configDir).reload())?.tokens?.accessToken).toBe("access-storage-0123456789");
    await storageIn(configDir).persist(loginFor("http://127.0.0.1:9/other"), true);
    const later = storageIn(configDir);
    expect(await later.reload()).toBeUndefined();
    expect(later.current).toBeUndefined();
  });

  it("the tokens it read are redacted from every message from then on", async () => {
    const configDir = join(scratchDir("cmb-storage-"), "config");
    await storageIn(configDir).persist(loginFor(serverUrl, "access-never-shown-42424242"), true);
    await storageIn(configDir).reload();
    expect(redact("token access-never-shown-42424242 leaked")).not.toContain("access-never-shown-42424242");
  });
});

describe("saving where the store cannot write", () => {
  /** A config dir below a regular file: no one, root included, can create it. */
  function unwritableConfigDir(): string {
    const root = scratchDir("cmb-storage-");
    writeFileSync(join(root, "a-file"), "");
    return join(root, "a-file", "config");
  }

  it("strict (login commands): the TokenStoreError reaches the caller", async () => {
    const storage = storageIn(unwritableConfigDir());
    await expect(storage.persist(loginFor(serverUrl), true)).rejects.toBeInstanceOf(TokenStoreError);
  });

  it("not strict (the bridge): kept in memory, with a warning saying so", async () => {
    const warnings: string[] = [];
    const storage = storageIn(unwritableConfigDir(), warnings);
    await storage.persist(loginFor(serverUrl), false);
    expect(storage.current?.tokens?.accessToken).toBe("access-storage-0123456789");
    expect(warnings).toEqual([expect.stringMatching(/kept in memory only\.$/)]);
  });
});
