/** OAuthSession as a whole (src/auth/session/oauth-session.ts): URL checks, no secret in logs, several processes on one login. */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { OAuthSession, UnsafeUrlError } from "../../../src/auth/index.js";
import { LoginStore } from "../../../src/auth/login-store.js";
import { scratchDir } from "../../support/scratch-dir.js";
import { buildChildScript } from "../fixtures/build-child.js";
import { cleanUpSessions, type SessionSetup, setup } from "./helpers.js";

afterEach(cleanUpSessions);

describe("URLs a session accepts", () => {
  it("plain http to a non-loopback server is refused unless allowHttp", () => {
    const options = { serverUrl: "http://chat.example/mcp", configDir: scratchDir("cmb-session-") };
    expect(() => new OAuthSession(options)).toThrow(UnsafeUrlError);
    expect(() => new OAuthSession({ ...options, allowHttp: true })).not.toThrow();
  });
});

describe("readAhead: the stored login read before the first token is asked for", () => {
  it("the first accessToken() takes the login read ahead, without reading the store again", async () => {
    const t = await setup();
    await t.writeStoredLogin({ accessToken: "ahead-access", expiresAt: Date.now() + 3_600_000 });
    const loads = vi.spyOn(LoginStore.prototype, "load");
    const session = t.session();
    session.readAhead();
    session.readAhead();
    expect(await session.accessToken()).toBe("ahead-access");
    expect(await session.accessToken()).toBe("ahead-access");
    expect(loads).toHaveBeenCalledTimes(1);
  });

  it("a login saved by another process after the read ahead is still seen", async () => {
    const t = await setup();
    await t.writeStoredLogin({ accessToken: "old-access", expiresAt: Date.now() + 3_600_000 });
    const loads = vi.spyOn(LoginStore.prototype, "load");
    const session = t.session();
    session.readAhead();
    expect((await loads.mock.results[0]?.value)?.tokens?.accessToken).toBe("old-access");
    await t.writeStoredLogin({ accessToken: "new-access", expiresAt: Date.now() + 3_600_000 });
    expect(await session.accessToken()).toBe("new-access");
  });
});

describe("logs never carry secrets", () => {
  it("no token, code, verifier or secret reaches the log or stderr through sign-in, refresh and sign-out", async () => {
    const t = await setup({ scopesSupported: ["mcp:read"] });
    const logged: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      logged.push(String(chunk));
      return true;
    });
    const log = (_level: string, message: string) => {
      logged.push(message);
    };
    const token = await t.session({ log }).recover(await t.challenge());
    const { refreshToken } = t.storedLogin().tokens!;
    await t.expireStoredToken();
    const refreshed = await t.session({ log }).accessToken();
    const secondRefresh = t.storedLogin().tokens!.refreshToken!;
    await t.session({ log }).signOut();
    const text = logged.join("\n");
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [token, refreshToken!, refreshed!, secondRefresh])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/[?&]code=/);
  });
});

describe("several processes at once", () => {
  let child: string;
  beforeAll(async () => {
    child = await buildChildScript(resolve("test/auth/fixtures/session-child.ts"));
  });

  function runChild(t: SessionSetup): Promise<string> {
    return new Promise((done, fail) => {
      const proc = spawn(process.execPath, [child, t.tiny.resourceUrl, t.configDir], {
        env: t.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      proc.stdout.on("data", (chunk) => {
        out += chunk;
      });
      // Its sign-in notice is kept from the run's output; shown only when the child fails.
      proc.stderr.on("data", (chunk) => {
        err += chunk;
      });
      proc.once("error", fail);
      proc.once("close", (code) =>
        code === 0 ? done(out.trim()) : fail(new Error(`child exited ${code}: ${err}`)),
      );
    });
  }

  it("three processes with no tokens open the browser once and all end up signed in", async () => {
    const t = await setup();
    const results = await Promise.all([runChild(t), runChild(t), runChild(t)]);
    expect(t.browserOpens()).toBe(1);
    expect(t.tiny.authorizations).toHaveLength(1);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatch(/^200 [0-9a-f]{64}$/);
  });

  it("three processes due for a refresh spend the rotating refresh token once", async () => {
    const t = await setup();
    await t.session().signIn();
    await t.expireStoredToken();
    const results = await Promise.all([runChild(t), runChild(t), runChild(t)]);
    expect(t.tiny.refreshes).toBe(1);
    expect(t.tiny.refreshReuse).toBe(0);
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatch(/^200 /);
  });
});
