/** Staying signed in (src/auth/session/refresh.ts): refresh ahead of expiry, rotation, a refused refresh token. */
import { afterEach, describe, expect, it } from "vitest";
import { cleanUpSessions, setup } from "./helpers.js";

afterEach(cleanUpSessions);

describe("staying signed in: refresh", () => {
  it("refreshes ahead of expiry, with rotation, and never reuses a spent refresh token", async () => {
    const t = await setup();
    const first = await t.session().recover(await t.challenge());
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
    expect(t.browserOpens()).toBe(1);
  });

  it("a refused refresh token: accessToken() says undefined, recover() signs in again", async () => {
    const t = await setup();
    await t.session().recover(await t.challenge());
    t.tiny.revokeRefreshTokens();
    await t.expireStoredToken();
    const session = t.session();
    expect(await session.accessToken()).toBeUndefined();
    const token = await session.recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.browserOpens()).toBe(2);
    expect(t.tiny.registrations).toBe(1);
  });

  it("a 401 for a token that another session already refreshed just reloads", async () => {
    const t = await setup();
    const a = t.session();
    const b = t.session();
    const old = await a.recover(await t.challenge());
    expect(await b.accessToken()).toBe(old);
    const fresh = await a.recover({ status: 401, wwwAuthenticate: null, rejectedToken: old });
    expect(fresh).not.toBe(old);
    expect(await b.recover({ status: 401, wwwAuthenticate: null })).toBe(fresh);
    expect(t.tiny.refreshes).toBe(1);
    expect(t.browserOpens()).toBe(1);
  });
});
