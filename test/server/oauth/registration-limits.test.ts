/** Bounded dynamic registrations: unused ones expire, used ones expire with their grants, and at the cap the oldest unused one makes room; through the server's handler (no port). */
import { afterEach, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import type { OAuthRegistrationLimits } from "../../../src/server/options.js";
import {
  authorizeUrl,
  CALLBACK_URL,
  followToCallback,
  pkcePair,
  postForm,
  registerClient,
  startInProcessTestServer,
  TestClock,
} from "./helpers.js";

let server: ReferenceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(limits: OAuthRegistrationLimits, clock: TestClock): Promise<ReferenceServer> {
  server = startInProcessTestServer({
    autoApprove: "acme",
    oauthNow: clock.now,
    oauthRegistrationLimits: limits,
  });
  return server;
}

/** Status of `/authorize` for the client: 302 to the callback when the server knows it, 400 when it does not. */
async function authorizeStatus(baseUrl: string, clientId: string): Promise<number> {
  const response = await fetch(
    authorizeUrl(baseUrl, {
      client_id: clientId,
      redirect_uri: CALLBACK_URL,
      code_challenge: pkcePair().challenge,
    }),
    { redirect: "manual" },
  );
  await response.body?.cancel();
  return response.status;
}

/** Uses the client for a grant (a code exchanged for tokens); returns the refresh token. */
async function useForGrant(baseUrl: string, clientId: string): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const callback = await followToCallback(
    authorizeUrl(baseUrl, { client_id: clientId, redirect_uri: CALLBACK_URL, code_challenge: challenge }),
    CALLBACK_URL,
  );
  const { status, body } = await postForm(`${baseUrl}/token`, {
    grant_type: "authorization_code",
    client_id: clientId,
    code: callback.searchParams.get("code") ?? "",
    code_verifier: verifier,
    redirect_uri: CALLBACK_URL,
  });
  expect(status).toBe(200);
  return String(body.refresh_token);
}

describe("a registration never used for a grant", () => {
  it("is forgotten after its time to live: /authorize and /token no longer know the client", async () => {
    const clock = new TestClock();
    const { url } = await start({ unusedTtlSeconds: 60 }, clock);
    const { client_id } = await registerClient(url);
    expect(await authorizeStatus(url, client_id)).toBe(302);

    clock.advance(61_000);
    expect(await authorizeStatus(url, client_id)).toBe(400);
    const token = await postForm(`${url}/token`, {
      grant_type: "refresh_token",
      client_id,
      refresh_token: "chat_rt_anything",
    });
    expect(token.body.error).toBe("invalid_client");
  });

  it("is kept before its time to live", async () => {
    const clock = new TestClock();
    const { url } = await start({ unusedTtlSeconds: 60 }, clock);
    const { client_id } = await registerClient(url);
    clock.advance(59_000);
    expect(await authorizeStatus(url, client_id)).toBe(302);
  });
});

describe("a registration used for a grant", () => {
  it("does not expire: its refresh token works long after the unused time to live", async () => {
    const clock = new TestClock();
    const { url } = await start({ unusedTtlSeconds: 60 }, clock);
    const { client_id } = await registerClient(url);
    const refreshToken = await useForGrant(url, client_id);

    clock.advance(24 * 3600 * 1000);
    expect(await authorizeStatus(url, client_id)).toBe(302);
    const refreshed = await postForm(`${url}/token`, {
      grant_type: "refresh_token",
      client_id,
      refresh_token: refreshToken,
    });
    expect(refreshed.status).toBe(200);
  });
});

describe("a registration whose grants have all ended", () => {
  it("expires with them: once its refresh tokens have expired, it is forgotten and frees its place under the cap", async () => {
    const clock = new TestClock();
    const { url } = await start({ maxClients: 1, unusedTtlSeconds: 60 }, clock);
    const used = (await registerClient(url)).client_id;
    await useForGrant(url, used);

    // Refresh tokens live 30 days: past them the grant has ended, and so has the registration.
    clock.advance(31 * 24 * 3600 * 1000);
    const next = await fetch(`${url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [CALLBACK_URL], token_endpoint_auth_method: "none" }),
    });
    expect(next.status).toBe(201);
    expect(await authorizeStatus(url, used)).toBe(400);
  });

  it("expires once its only grant is revoked (and the unused time to live has passed)", async () => {
    const clock = new TestClock();
    const { url } = await start({ maxClients: 1, unusedTtlSeconds: 60 }, clock);
    const used = (await registerClient(url)).client_id;
    const refreshToken = await useForGrant(url, used);
    const revoked = await postForm(`${url}/revoke`, { client_id: used, token: refreshToken });
    expect(revoked.status).toBe(200);

    clock.advance(61_000);
    expect(await authorizeStatus(url, used)).toBe(400);
  });

  it("is kept while one of its grants lives: refreshing keeps it alive past the first token's expiry", async () => {
    const clock = new TestClock();
    const { url } = await start({ unusedTtlSeconds: 60 }, clock);
    const used = (await registerClient(url)).client_id;
    let refreshToken = await useForGrant(url, used);
    for (let month = 0; month < 3; month++) {
      clock.advance(20 * 24 * 3600 * 1000);
      const refreshed = await postForm(`${url}/token`, {
        grant_type: "refresh_token",
        client_id: used,
        refresh_token: refreshToken,
      });
      expect(refreshed.status).toBe(200);
      refreshToken = String(refreshed.body.refresh_token);
    }
    expect(await authorizeStatus(url, used)).toBe(302);
  });
});

describe("the cap on registrations", () => {
  it("evicts the oldest unused registration to make room, never a used one", async () => {
    const clock = new TestClock();
    const { url } = await start({ maxClients: 3 }, clock);
    const used = (await registerClient(url)).client_id;
    await useForGrant(url, used);
    clock.advance(1000);
    const oldestUnused = (await registerClient(url)).client_id;
    clock.advance(1000);
    const newerUnused = (await registerClient(url)).client_id;
    clock.advance(1000);
    const newest = (await registerClient(url)).client_id;

    expect(await authorizeStatus(url, oldestUnused)).toBe(400);
    for (const kept of [used, newerUnused, newest]) expect(await authorizeStatus(url, kept)).toBe(302);
  });

  it("refuses a registration with 503 when every kept client holds a grant", async () => {
    const clock = new TestClock();
    const { url } = await start({ maxClients: 1 }, clock);
    const used = (await registerClient(url)).client_id;
    await useForGrant(url, used);

    const refused = await fetch(`${url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [CALLBACK_URL], token_endpoint_auth_method: "none" }),
    });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: "temporarily_unavailable" });
    expect(await authorizeStatus(url, used)).toBe(302);
  });

  it("does not count pre-registered clients, which never expire", async () => {
    const clock = new TestClock();
    server = startInProcessTestServer({
      autoApprove: "acme",
      oauthNow: clock.now,
      oauthRegistrationLimits: { maxClients: 1, unusedTtlSeconds: 60 },
      oauthClients: [{ client_id: "pre-registered", redirect_uris: [CALLBACK_URL] }],
    });
    const dynamic = (await registerClient(server.url)).client_id;
    clock.advance(3600_000);
    expect(await authorizeStatus(server.url, "pre-registered")).toBe(302);
    expect(await authorizeStatus(server.url, dynamic)).toBe(400);
  });
});
