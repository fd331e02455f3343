/** Signing out (src/auth/session/revocation.ts): both tokens revoked, the login and the registration forgotten; on the tiny server's handler, from a stored login (the sign-in after it: sign-in-client.test.ts). */
import { afterEach, describe, expect, it } from "vitest";
import { cleanUpSessions, setupInProcess } from "./helpers.js";

afterEach(cleanUpSessions);

describe("signOut", () => {
  it("revokes both tokens and forgets the login and the client registration", async () => {
    const t = setupInProcess();
    const token = await t.signedIn();
    const session = t.session();
    expect(await session.accessToken()).toBe(token);
    await session.signOut();
    expect(t.tiny.revoked.sort()).toEqual(["access_token", "refresh_token"]);
    expect(await t.resourceStatus(token)).toBe(401);
    expect(await session.describeStorage()).toEqual({ kind: "none", location: "" });
    expect(await t.session().accessToken()).toBeUndefined();
    expect(t.signInPrompts()).toBe(0);
  });
});
