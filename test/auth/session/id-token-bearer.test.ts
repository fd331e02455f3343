/** `useIdToken` (`--use-id-token`): the OIDC ID token of the token response is the bearer once its claims pass OpenID Connect Core §3.1.3.7; none is a clear refusal. */
import { afterEach, describe, expect, it } from "vitest";
import { cleanUpSessions, setup } from "./helpers.js";

afterEach(cleanUpSessions);

describe("useIdToken (--use-id-token)", () => {
  it("hands out the ID token of the sign-in, and of each refresh, instead of the access token", async () => {
    const t = await setup({ idTokenTtlSeconds: 600 });
    const token = await t.session({ useIdToken: true }).recover(await t.challenge());
    expect(token).toBe(t.tiny.idTokens[0]);
    expect(await t.resourceStatus(token)).toBe(200);
    await t.expireStoredToken();
    const refreshed = await t.session({ useIdToken: true }).accessToken();
    expect(refreshed).toBe(t.tiny.idTokens[1]);
  });

  it("keeps the ID token only as long as its own exp says, when that is sooner than expires_in", async () => {
    const t = await setup({ idTokenTtlSeconds: 120, accessTokenTtlSeconds: 3600 });
    await t.session({ useIdToken: true }).recover(await t.challenge());
    const expiresAt = t.storedLogin().tokens?.expiresAt ?? 0;
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(120_000);
  });

  it("refuses a token response without an ID token, naming the flag and the openid scope", async () => {
    const t = await setup();
    const failure = await t
      .session({ useIdToken: true })
      .recover(await t.challenge())
      .catch((error: unknown) => error);
    expect(String(failure)).toMatch(/--use-id-token.*no ID token.*openid/s);
  });

  it("a refresh answer without an ID token drops the tokens and signs in again, which brings a new one", async () => {
    const t = await setup({ idTokenTtlSeconds: 600, noIdTokenOnRefresh: true });
    await t.session({ useIdToken: true }).recover(await t.challenge());
    await t.expireStoredToken();
    const session = t.session({ useIdToken: true });
    expect(await session.accessToken()).toBeUndefined();
    expect(t.storedLogin().tokens).toBeUndefined();
    const again = await session.recover(await t.challenge());
    expect(again).toBe(t.tiny.idTokens[1]);
  });

  it("without it, the access token is the bearer even when an ID token came along", async () => {
    const t = await setup({ idTokenTtlSeconds: 600 });
    const token = await t.session().recover(await t.challenge());
    expect(token).not.toBe(t.tiny.idTokens[0]);
    expect(await t.resourceStatus(token)).toBe(200);
  });

  // OpenID Connect Core §3.1.3.7: an ID token for another client, from another issuer, or expired is no bearer of ours.
  const now = () => Math.floor(Date.now() / 1000);
  it.each([
    ["another issuer", () => ({ iss: "https://evil.example" }), /iss.*https:\/\/evil\.example/],
    ["no issuer", () => ({ iss: undefined }), /iss/],
    ["another audience", () => ({ aud: "someone-else" }), /aud/],
    [
      "our client among others, with azp naming another",
      (id: string) => ({ aud: ["x", id], azp: "x" }),
      /azp/,
    ],
    ["an exp in the past", () => ({ exp: now() - 3600 }), /expired/],
    ["no exp", () => ({ exp: undefined }), /exp/],
    ["an iat in the future", () => ({ iat: now() + 3600 }), /iat/],
  ])("refuses an ID token with %s, naming the claim", async (_name, claims, why) => {
    const t = await setup({ idTokenTtlSeconds: 600, idTokenClaims: claims });
    const failure = await t
      .session({ useIdToken: true })
      .recover(await t.challenge())
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(String(failure)).toMatch(/--use-id-token/);
    expect(String(failure)).toMatch(why);
    expect(t.storedLogin()?.tokens).toBeUndefined();
  });

  it("takes an ID token whose aud lists our client with others when azp names us", async () => {
    const t = await setup({ idTokenTtlSeconds: 600, idTokenClaims: (id) => ({ aud: ["x", id], azp: id }) });
    const token = await t.session({ useIdToken: true }).recover(await t.challenge());
    expect(token).toBe(t.tiny.idTokens[0]);
  });
});
