/** Which client a browser sign-in uses (src/auth/session/registration.ts), and the sign-ins that follow a refused refresh token or a sign-out: integration, since each runs the loopback callback and the HTTP browser. */
import { afterEach, describe, expect, it } from "vitest";
import { cleanUpSessions, setup } from "./helpers.js";

afterEach(cleanUpSessions);

describe("the client of a sign-in: registration", () => {
  it("a later sign-in on the same callback port reuses the client registration", async () => {
    const t = await setup();
    await t.session().signIn();
    await t.session().signIn();
    expect(t.browserOpens()).toBe(2);
    // The reused registration is first checked at /authorize (redirect not followed), then used by the browser.
    expect(t.tiny.authorizations).toHaveLength(3);
    expect(new Set(t.tiny.authorizations.map((a) => a.clientId)).size).toBe(1);
    expect(t.tiny.registrations).toBe(1);
  });

  it("a pre-registered client (--client-id, secret from the environment) skips registration and authenticates", async () => {
    const t = await setup({ preRegistered: { clientId: "pre-1", clientSecret: "s3cret" } });
    const token = await t.session({ clientId: "pre-1", clientSecret: "s3cret" }).recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.tiny.registrations).toBe(0);
    expect(t.tiny.authorizations[0]?.clientId).toBe("pre-1");
    expect(t.tiny.tokenClientAuth).toEqual(["basic:pre-1:s3cret"]);
  });

  it("a client ID metadata document URL is the client_id where the server supports it", async () => {
    const t = await setup({ clientIdMetadataDocuments: true });
    const clientMetadataUrl = "https://client.example/chat-mcp-bridge.json";
    const token = await t.session({ clientMetadataUrl }).recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.tiny.registrations).toBe(0);
    expect(t.tiny.authorizations[0]?.clientId).toBe(clientMetadataUrl);
  });

  it("a client metadata URL is ignored (registration instead) where the server does not support it", async () => {
    const t = await setup();
    await t.session({ clientMetadataUrl: "https://client.example/m.json" }).recover(await t.challenge());
    expect(t.tiny.registrations).toBe(1);
  });
});

describe("the sign-in after a refused refresh or a sign-out", () => {
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

  it("signOut forgets the client registration: the next sign-in registers anew", async () => {
    const t = await setup();
    const session = t.session();
    await session.recover(await t.challenge());
    await session.signOut();
    await t.session().signIn();
    expect(t.tiny.registrations).toBe(2);
    expect(t.browserOpens()).toBe(2);
  });
});
