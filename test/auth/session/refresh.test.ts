/** Staying signed in (src/auth/session/refresh.ts): refresh ahead of expiry, rotation, a refresh another session made; on the tiny server's handler, from a stored login (a refused refresh token's new sign-in: sign-in-again.test.ts). */
import { afterEach, describe, expect, it } from "vitest";
import { cleanUpSessions, setupInProcess } from "./helpers.js";

afterEach(cleanUpSessions);

describe("staying signed in: refresh", () => {
  it("refreshes ahead of expiry, with rotation, and never reuses a spent refresh token", async () => {
    const t = setupInProcess();
    const first = await t.signedIn();
    const firstRefresh = t.storedLogin().tokens?.refreshToken;
    await t.expireStoredToken();
    const session = t.session();
    const second = await session.accessToken();
    expect(second).not.toBe(first);
    expect(await t.resourceStatus(second!)).toBe(200);
    expect(t.storedLogin().tokens?.refreshToken).not.toBe(firstRefresh);
    expect(await session.accessToken()).toBe(second);
    expect(t.tiny.refreshes).toBe(1);
    expect(t.tiny.refreshReuse).toBe(0);
    expect(t.signInPrompts()).toBe(0);
  });

  it("a 401 for a token that another session already refreshed just reloads", async () => {
    const t = setupInProcess();
    const a = t.session();
    const b = t.session();
    const old = await t.signedIn();
    expect(await a.accessToken()).toBe(old);
    expect(await b.accessToken()).toBe(old);
    const fresh = await a.recover({ status: 401, wwwAuthenticate: null, rejectedToken: old });
    expect(fresh).not.toBe(old);
    expect(await b.recover({ status: 401, wwwAuthenticate: null })).toBe(fresh);
    expect(t.tiny.refreshes).toBe(1);
    expect(t.signInPrompts()).toBe(0);
  });
});
