/** An authorization server that sends absurd `expires_in` values: the login stays readable and the browser stays shut (integration: the sign-in runs a browser process and the loopback callback, and counting browser opens is the subject). */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OAuthSession } from "../../src/auth/index.js";
import { loginKey, loginPaths } from "../../src/auth/login-key.js";
import { startTinyOAuthServer, type TinyOAuthServer } from "../auth/fixtures/tiny-oauth-server.js";
import { scratchDir } from "../support/scratch-dir.js";
import { HTTP_BROWSER } from "./fixtures/bridge-driver.js";

let tiny: TinyOAuthServer | undefined;
afterEach(async () => {
  await tiny?.close();
  tiny = undefined;
});

async function signedIn(expiresIn: number, issueRefreshTokens = true) {
  tiny = await startTinyOAuthServer({ advertisedExpiresIn: expiresIn, issueRefreshTokens });
  const dir = scratchDir("cmb-lifetime-");
  const browserLog = join(dir, "browser.log");
  const options = {
    serverUrl: tiny.resourceUrl,
    configDir: join(dir, "config"),
    tokenStore: "file" as const,
    authTimeoutMs: 10_000,
    env: { ...process.env, BROWSER: `"${process.execPath}" "${HTTP_BROWSER}"`, HTTP_BROWSER_LOG: browserLog },
  };
  const first = new OAuthSession(options);
  const token = await first.recover({ status: 401, wwwAuthenticate: null });
  const stored = JSON.parse(
    readFileSync(loginPaths(options.configDir, loginKey(tiny.resourceUrl)).file, "utf8"),
  );
  const browserOpens = () =>
    existsSync(browserLog) ? readFileSync(browserLog, "utf8").trim().split("\n").length : 0;
  return { options, token, stored, browserOpens };
}

describe("expires_in: 1e308", () => {
  it("is stored as a finite expiry (at most about a year) that the next start reads back, with no new sign-in", async () => {
    const { options, token, stored, browserOpens } = await signedIn(1e308);
    expect(Number.isFinite(stored.tokens.expiresAt)).toBe(true);
    expect(stored.tokens.expiresAt).toBeLessThanOrEqual(Date.now() + 367 * 24 * 3600 * 1000);
    // The next process start: the stored login is valid, so no registration and no browser.
    expect(await new OAuthSession(options).accessToken()).toBe(token);
    expect(tiny!.registrations).toBe(1);
    expect(browserOpens()).toBe(1);
  });
});

describe("expires_in <= 0 without a refresh token", () => {
  for (const expiresIn of [0, -5]) {
    it(`${expiresIn}: counts as no expiry given, so the token is used instead of a browser per request`, async () => {
      const { options, token, stored, browserOpens } = await signedIn(expiresIn, false);
      expect(stored.tokens.refreshToken).toBeUndefined();
      expect(stored.tokens.expiresAt).toBeUndefined();
      const session = new OAuthSession(options);
      for (let i = 0; i < 3; i++) expect(await session.accessToken()).toBe(token);
      expect(browserOpens()).toBe(1);
    });
  }
});
