/**
 * Keychain backends, end to end across processes. The backend rows run only when a Secret Service answers; CI starts
 * one with: dbus-run-session -- bash -c 'echo -n pw | gnome-keyring-daemon --unlock --components=secrets; npx vitest run test/keychain'
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type KeychainBackend, loadKeychainBackend } from "../../src/auth/keychain.js";
import { loginKey, loginPaths } from "../../src/auth/login-key.js";
import { buildChildScript } from "../auth/fixtures/build-child.js";
import { needs } from "../support/requirements.js";
import { scratchDir } from "../support/scratch-dir.js";

/**
 * Options that skip a backend's tests when it cannot be tested here, naming what is missing: its optional module
 * (`keychain-module`: install it) or an answering Secret Service (`keychain`: start one).
 */
async function backendNeeds(backend: KeychainBackend["name"]): Promise<ReturnType<typeof needs>> {
  const { backend: loaded, failures, installed } = await loadKeychainBackend([backend]);
  const reason = loaded ? undefined : failures.join("; ").split("\n")[0];
  return needs(installed.includes(backend) || loaded ? "keychain" : "keychain-module", reason);
}

let child: string;
beforeAll(async () => {
  child = await buildChildScript(resolve("test/keychain/fixtures/store-child.ts"));
});

interface ChildResult {
  storedIn?: string;
  accessToken?: string | null;
  storage?: { kind: string; location: string };
  error?: string;
  message?: string;
  warnings: string[];
}

function runStore(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<ChildResult> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, [child, ...args], { env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout.on("data", (chunk) => {
      out += chunk;
    });
    proc.once("error", fail);
    proc.once("exit", () => done(JSON.parse(out) as ChildResult));
  });
}

function scratch() {
  const serverUrl = `http://127.0.0.1:${10_000 + Math.floor(Math.random() * 50_000)}/mcp/${randomBytes(4).toString("hex")}`;
  const configDir = scratchDir("cmb-keychain-");
  return { serverUrl, configDir, paths: loginPaths(configDir, loginKey(serverUrl)) };
}

for (const backend of ["keytar", "napi-keyring"] as const) {
  describe(`keychain backend ${backend}`, await backendNeeds(backend), () => {
    it("tokens written by one process are read back by another, and nothing secret is on disk", async () => {
      const { serverUrl, configDir, paths } = scratch();
      const token = `access-${randomBytes(8).toString("hex")}`;
      expect(await runStore(["save", serverUrl, configDir, "keychain", backend, token])).toMatchObject({
        storedIn: "keychain",
      });
      expect(existsSync(paths.file)).toBe(false);
      expect(readFileSync(paths.keychainPointer, "utf8")).not.toContain(token);

      const loaded = await runStore(["load", serverUrl, configDir, "auto", ""]);
      expect(loaded.accessToken).toBe(token);
      expect(loaded.storage?.kind).toBe("keychain");

      await runStore(["delete", serverUrl, configDir, "auto", ""]);
      expect((await runStore(["load", serverUrl, configDir, "auto", ""])).accessToken).toBeNull();
      expect(existsSync(paths.keychainPointer)).toBe(false);
    });
  });
}

describe("fallback when no Secret Service answers", () => {
  const noBus = { ...process.env };
  delete noBus.DBUS_SESSION_BUS_ADDRESS;
  delete noBus.DISPLAY;

  it("auto saves in the 0600 file store, warning only when a keychain module is installed", async () => {
    const { installed } = await loadKeychainBackend(["keytar", "napi-keyring"]);
    const { serverUrl, configDir, paths } = scratch();
    const saved = await runStore(["save", serverUrl, configDir, "auto", "", "access-file"], noBus);
    expect(saved.storedIn).toBe("file");
    if (installed.length > 0) {
      expect(saved.warnings.join("\n")).toMatch(/No keychain answered.*0600 file/s);
    } else {
      // Without a keychain module (npm ci --omit=optional) the file store is the plan, not a fallback: no warning.
      expect(saved.warnings.join("\n")).not.toMatch(/keychain/i);
    }
    expect(existsSync(paths.file)).toBe(true);
    expect((await runStore(["load", serverUrl, configDir, "auto", ""], noBus)).accessToken).toBe(
      "access-file",
    );
  });

  it("says the file fallback once, when a login is first saved: not for the registration, not on each refresh", async () => {
    const { installed } = await loadKeychainBackend(["keytar", "napi-keyring"]);
    if (installed.length === 0) return; // No keychain module: no fallback warning at all (the test above).
    const { serverUrl, configDir } = scratch();
    const fallback = /No keychain answered/;
    const registration = await runStore(["save", serverUrl, configDir, "auto", "", "none"], noBus);
    expect(registration.warnings.join("\n")).not.toMatch(fallback);
    const signedIn = await runStore(["save", serverUrl, configDir, "auto", "", "access-1"], noBus);
    expect(signedIn.warnings.join("\n")).toMatch(fallback);
    const refreshed = await runStore(["save", serverUrl, configDir, "auto", "", "access-2"], noBus);
    expect(refreshed.warnings.join("\n")).not.toMatch(fallback);
  });

  it("--token-store keychain fails with a message saying what to do", async () => {
    const { serverUrl, configDir } = scratch();
    const saved = await runStore(["save", serverUrl, configDir, "keychain", "", "access-x"], noBus);
    expect(saved.error).toBe("TokenStoreError");
    expect(saved.message).toMatch(/No keychain is available.*--token-store file/s);
  });
});
