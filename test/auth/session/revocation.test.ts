/** Signing out (src/auth/session/revocation.ts): both tokens revoked, the login and the registration forgotten. */
import { afterEach, describe, expect, it } from "vitest";
import { cleanUpSessions, setup } from "./helpers.js";

afterEach(cleanUpSessions);

describe("signOut", () => {
  it("revokes both tokens and forgets the login and the client registration", async () => {
    const t = await setup();
    const session = t.session();
    const token = await session.recover(await t.challenge());
    await session.signOut();
    expect(t.tiny.revoked.sort()).toEqual(["access_token", "refresh_token"]);
    expect(await t.resourceStatus(token)).toBe(401);
    expect(await session.describeStorage()).toEqual({ kind: "none", location: "" });
    expect(await t.session().accessToken()).toBeUndefined();
    await t.session().signIn();
    expect(t.tiny.registrations).toBe(2);
  });
});
