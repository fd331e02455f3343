/** Rate limits of the OAuth endpoints (`/authorize`, `/token`, `/register`): per client IP, 429 with Retry-After, recovery; through the server's handler (no port). */
import { RegistrationRejectedError, registerClient as sdkRegisterClient } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OAuthRateLimits } from "../../../src/server/options.js";
import type { RequestableReferenceServer as ReferenceServer } from "../../support/reference-request.js";
import {
  authorizeUrl,
  CALLBACK_URL,
  pkcePair,
  postForm,
  registerClient,
  startInProcessTestServer,
  TestClock,
} from "./helpers.js";

/** A burst of two, then (almost) nothing until the test clock moves: real time never refills a bucket here. */
const TIGHT = { capacity: 2, refillPerSecond: 0.01 };

const registration = {
  client_name: "rate limited client",
  redirect_uris: [CALLBACK_URL],
  token_endpoint_auth_method: "none",
};

function register(baseUrl: string): Promise<Response> {
  return fetch(`${baseUrl}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(registration),
  });
}

function tokenRequest(baseUrl: string) {
  return postForm(`${baseUrl}/token`, {
    grant_type: "authorization_code",
    client_id: "no-such-client",
    code: "chat_ac_made-up",
    code_verifier: pkcePair().verifier,
    redirect_uri: CALLBACK_URL,
  });
}

/**
 * A registration sent from another client address (127.0.0.2), i.e. another client IP; that node:http hands the
 * handler the socket's address is test/server/node-http.test.ts's.
 */
async function registerFrom(server: ReferenceServer, clientAddress: string): Promise<number> {
  const response = await server.fetchFrom(clientAddress)(`${server.url}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(registration),
  });
  await response.body?.cancel();
  return response.status;
}

/** Sends requests until one is refused with 429 (bounded, so a missing limit fails instead of hanging). */
async function exhaust(send: () => Promise<{ status: number }>): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) if ((await send()).status === 429) return;
  throw new Error("never rate limited");
}

function startLimited(limits: OAuthRateLimits, clock: TestClock): ReferenceServer {
  return startInProcessTestServer({ autoApprove: "acme", oauthNow: clock.now, oauthRateLimit: limits });
}

describe("/register past its limit", () => {
  const clock = new TestClock();
  let server: ReferenceServer;
  beforeAll(async () => {
    server = startLimited({ register: TIGHT }, clock);
  });
  afterAll(() => server.close());

  it("answers 429 with Retry-After and too_many_requests, then registers again after the wait", async () => {
    for (let i = 0; i < TIGHT.capacity; i++) expect((await register(server.url)).status).toBe(201);
    const refused = await register(server.url);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter) && retryAfter > 0).toBe(true);
    expect(await refused.json()).toMatchObject({ error: "too_many_requests" });

    clock.advance(retryAfter * 1000);
    expect((await register(server.url)).status).toBe(201);
  });

  it("is what the MCP SDK v2 client reports as a rejected registration: status 429, too_many_requests", async () => {
    await exhaust(() => register(server.url));
    const failure = await sdkRegisterClient(server.url, {
      clientMetadata: { ...registration, redirect_uris: [CALLBACK_URL] },
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RegistrationRejectedError);
    expect((failure as RegistrationRejectedError).status).toBe(429);
    expect(JSON.parse((failure as RegistrationRejectedError).body)).toMatchObject({
      error: "too_many_requests",
    });
  });

  it("counts per client IP: another address still registers", async () => {
    await exhaust(() => register(server.url));
    expect(await registerFrom(server, "127.0.0.2")).toBe(201);
  });
});

describe("/token past its limit", () => {
  const clock = new TestClock();
  let server: ReferenceServer;
  beforeAll(async () => {
    server = startLimited({ token: TIGHT }, clock);
  });
  afterAll(() => server.close());

  it("answers 429 with Retry-After and a JSON OAuth error, then answers normally after the wait", async () => {
    for (let i = 0; i < TIGHT.capacity; i++) expect((await tokenRequest(server.url)).status).not.toBe(429);
    const refused = await fetch(`${server.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=refresh_token&refresh_token=x&client_id=y",
    });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(refused.headers.get("content-type")).toMatch(/application\/json/);
    expect(await refused.json()).toMatchObject({ error: "too_many_requests" });

    clock.advance(retryAfter * 1000);
    const after = await tokenRequest(server.url);
    expect(after.status).not.toBe(429);
    expect(after.body.error).not.toBe("too_many_requests");
  });

  it("leaves the other endpoints alone: registration still works", async () => {
    await exhaust(() => tokenRequest(server.url));
    expect((await register(server.url)).status).toBe(201);
  });
});

describe("/authorize past its limit", () => {
  const clock = new TestClock();
  let server: ReferenceServer;
  let clientId: string;
  beforeAll(async () => {
    server = startLimited({ authorize: TIGHT }, clock);
    clientId = (await registerClient(server.url)).client_id;
  });
  afterAll(() => server.close());

  const open = () =>
    fetch(
      authorizeUrl(server.url, {
        client_id: clientId,
        redirect_uri: CALLBACK_URL,
        code_challenge: pkcePair().challenge,
        state: "s",
      }),
      { redirect: "manual" },
    );

  it("shows a 429 page with Retry-After and no redirect, then redirects with a code after the wait", async () => {
    for (let i = 0; i < TIGHT.capacity; i++) expect((await open()).status).toBe(302);
    const refused = await open();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("location")).toBeNull();
    expect(refused.headers.get("content-type")).toMatch(/text\/html/);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(await refused.text()).toContain("Too many sign-in attempts");

    clock.advance(retryAfter * 1000);
    const again = await open();
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get("location") ?? "").searchParams.get("code")).toBeTruthy();
  });
});

describe("turning limits off", () => {
  it("`false` for one endpoint leaves it unlimited while the others keep theirs", async () => {
    const clock = new TestClock();
    const server = startLimited({ register: false, token: TIGHT }, clock);
    try {
      for (let i = 0; i < TIGHT.capacity * 5; i++) expect((await register(server.url)).status).toBe(201);
      await exhaust(() => tokenRequest(server.url));
    } finally {
      await server.close();
    }
  });

  it("`oauthRateLimit: false` turns them all off", async () => {
    const server = startInProcessTestServer({ autoApprove: "acme", oauthRateLimit: false });
    try {
      for (let i = 0; i < 120; i++) expect((await register(server.url)).status).toBe(201);
    } finally {
      await server.close();
    }
  });
});

describe("the defaults", () => {
  it("let a burst of sign-ins from one address through (as the test suites make)", async () => {
    const server = startInProcessTestServer({ autoApprove: "acme" });
    try {
      const replies = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const { client_id } = await registerClient(server.url);
          const { verifier, challenge } = pkcePair();
          const authorized = await fetch(
            authorizeUrl(server.url, { client_id, redirect_uri: CALLBACK_URL, code_challenge: challenge }),
            { redirect: "manual" },
          );
          const code = new URL(authorized.headers.get("location") ?? "").searchParams.get("code") ?? "";
          return postForm(`${server.url}/token`, {
            grant_type: "authorization_code",
            client_id,
            code,
            code_verifier: verifier,
            redirect_uri: CALLBACK_URL,
          });
        }),
      );
      expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 200));
    } finally {
      await server.close();
    }
  });
});
