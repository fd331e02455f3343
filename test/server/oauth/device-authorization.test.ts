/** The reference server's device authorization grant (RFC 8628) through its handler: codes, the verification page, consent, and every polling answer. */
import { afterEach, describe, expect, it } from "vitest";
import {
  createInProcessReferenceServer,
  type InProcessReferenceServer,
  type ReferenceServerOptions,
} from "../../../src/server/index.js";
import { hiddenField, TestBrowser, TestClock } from "./helpers.js";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

let server: InProcessReferenceServer;
let clock: TestClock;

function start(options: Omit<ReferenceServerOptions, "port" | "host" | "publicUrl"> = {}) {
  clock = new TestClock();
  server = createInProcessReferenceServer({ oauthNow: clock.now, oauthRateLimit: false, ...options });
  return server;
}
afterEach(() => server?.close());

async function post(path: string, fields: Record<string, string | undefined>) {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.set(name, value);
  const response = await server.fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

async function registerDeviceClient(grantTypes = [DEVICE_GRANT, "refresh_token"]): Promise<string> {
  const response = await server.fetch(`${server.url}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "TV app",
      redirect_uris: [],
      grant_types: grantTypes,
      token_endpoint_auth_method: "none",
    }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

async function startDevice(clientId: string, extra: Record<string, string> = {}) {
  const { status, body, headers } = await post("/device_authorization", { client_id: clientId, ...extra });
  expect(status, JSON.stringify(body)).toBe(200);
  expect(headers.get("cache-control")).toBe("no-store");
  return body as {
    device_code: string;
    user_code: string;
    verification_uri: string;
    verification_uri_complete: string;
    expires_in: number;
    interval: number;
  };
}

const poll = (clientId: string, deviceCode: string, extra: Record<string, string> = {}) =>
  post("/token", { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId, ...extra });

/** A signed-in browser enters the code, lands on the consent page and decides. */
async function decideInBrowser(userCode: string, decision: "approve" | "deny", account = "acme") {
  const browser = new TestBrowser(server.url, server.fetch);
  await browser.signIn("dev");
  const form = await browser.get(`/device?user_code=${encodeURIComponent(userCode)}`);
  const formPage = await form.text();
  const entered = await browser.post("/device", { user_code: userCode, csrf: hiddenField(formPage, "csrf") });
  expect(entered.status).toBe(303);
  const consentPath = entered.headers.get("location") ?? "";
  expect(consentPath).toMatch(/^\/oauth\/consent\?request=/);
  const consentPage = await (await browser.get(consentPath)).text();
  const answer = await browser.post("/oauth/consent", {
    request: hiddenField(consentPage, "request"),
    csrf: hiddenField(consentPage, "csrf"),
    account,
    decision,
  });
  return { browser, consentPath, consentPage, answer, answerPage: await answer.text() };
}

describe("metadata and registration", () => {
  it("advertises the device authorization endpoint and grant (RFC 8414)", async () => {
    start();
    const metadata = (await (
      await server.fetch(`${server.url}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata.device_authorization_endpoint).toBe(`${server.url}/device_authorization`);
    expect(metadata.grant_types_supported).toContain(DEVICE_GRANT);
  });

  it("registers a device-only client without redirect URIs, but a code-grant client still needs one", async () => {
    start();
    await registerDeviceClient();
    const refused = await server.fetch(`${server.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "no redirect", token_endpoint_auth_method: "none" }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_redirect_uri");
  });
});

describe("deviceAuthorization: false", () => {
  it("leaves the grant out: no metadata, no endpoint, unsupported_grant_type at /token", async () => {
    start({ deviceAuthorization: false });
    const metadata = (await (
      await server.fetch(`${server.url}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata.device_authorization_endpoint).toBeUndefined();
    expect(metadata.grant_types_supported).not.toContain(DEVICE_GRANT);
    const clientId = await registerDeviceClient();
    const endpoint = await server.fetch(`${server.url}/device_authorization`, { method: "POST" });
    expect(endpoint.status).toBe(404);
    expect((await poll(clientId, "chat_dc_x")).body.error).toBe("unsupported_grant_type");
  });
});

describe("the device authorization request (RFC 8628 §3.1-3.2)", () => {
  it("answers a device code, a short unambiguous user code, both verification URIs, lifetime and interval", async () => {
    start();
    const clientId = await registerDeviceClient();
    const started = await startDevice(clientId, { scope: "chat:read", resource: `${server.url}/v2` });
    expect(started.user_code).toMatch(USER_CODE);
    expect(started.verification_uri).toBe(`${server.url}/device`);
    expect(started.verification_uri_complete).toBe(
      `${server.url}/device?user_code=${encodeURIComponent(started.user_code)}`,
    );
    expect(started.expires_in).toBe(600);
    expect(started.interval).toBe(5);
    expect(started.device_code.length).toBeGreaterThanOrEqual(32);
  });

  it("refuses a client not registered for the grant, unknown scopes and foreign resources", async () => {
    start();
    const codeClient = await registerDeviceClient(["refresh_token"]);
    expect((await post("/device_authorization", { client_id: codeClient })).body.error).toBe(
      "unauthorized_client",
    );
    const clientId = await registerDeviceClient();
    expect((await post("/device_authorization", { client_id: clientId, scope: "admin" })).body.error).toBe(
      "invalid_scope",
    );
    const foreign = await post("/device_authorization", {
      client_id: clientId,
      resource: "https://x.test/mcp",
    });
    expect(foreign.body.error).toBe("invalid_target");
    expect((await post("/device_authorization", { client_id: "nobody" })).body.error).toBe("invalid_client");
  });
});

describe("polling the token endpoint (RFC 8628 §3.4-3.5)", () => {
  it("authorization_pending, then slow_down when polled faster than the interval, which grows by 5 s", async () => {
    start();
    const clientId = await registerDeviceClient();
    const { device_code } = await startDevice(clientId);
    expect((await poll(clientId, device_code)).body.error).toBe("authorization_pending");
    clock.advance(2_000);
    const fast = await poll(clientId, device_code);
    expect(fast.status).toBe(400);
    expect(fast.body.error).toBe("slow_down");
    clock.advance(6_000); // on time for 5 s, too fast for the 10 s it now is
    expect((await poll(clientId, device_code)).body.error).toBe("slow_down");
    clock.advance(15_000);
    expect((await poll(clientId, device_code)).body.error).toBe("authorization_pending");
  });

  it("expired_token once the device code outlives expires_in", async () => {
    start({ deviceAuthorization: { lifetimeSeconds: 60 } });
    const clientId = await registerDeviceClient();
    const { device_code, expires_in } = await startDevice(clientId);
    expect(expires_in).toBe(60);
    clock.advance(61_000);
    expect((await poll(clientId, device_code)).body.error).toBe("expired_token");
  });

  it("invalid_grant for an unknown device code and for another client's", async () => {
    start();
    const clientId = await registerDeviceClient();
    const other = await registerDeviceClient();
    const { device_code } = await startDevice(clientId);
    expect((await poll(clientId, "chat_dc_nothing")).body.error).toBe("invalid_grant");
    expect((await poll(other, device_code)).body.error).toBe("invalid_grant");
  });
});

describe("the verification page and consent", () => {
  it("approve for a team: the device gets tokens once (bound to its resource, refreshable); a replay revokes them", async () => {
    start();
    const clientId = await registerDeviceClient();
    const started = await startDevice(clientId, { resource: `${server.url}/v2` });
    const { consentPage, answer, answerPage } = await decideInBrowser(started.user_code, "approve", "acme");
    // The same consent page as a browser sign-in: every account and team of the person, and the code to compare.
    expect(consentPage).toContain("Authorize TV app");
    expect(consentPage.match(/name="account"/g)).toHaveLength(4);
    expect(consentPage).toContain(started.user_code);
    expect(consentPage).not.toContain(started.device_code);
    expect(answer.status).toBe(200);
    expect(answerPage).toContain("Device approved");

    clock.advance(5_000);
    const redeemed = await poll(clientId, started.device_code);
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toMatchObject({ token_type: "Bearer", account: "acme" });
    const chats = await server.fetch(`${server.url}/v2/chats`, {
      headers: { authorization: `Bearer ${redeemed.body.access_token}` },
    });
    expect(chats.status).toBe(200);
    const onMcp = await server.fetch(server.mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${redeemed.body.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(onMcp.status).toBe(401);

    const refreshed = await post("/token", {
      grant_type: "refresh_token",
      refresh_token: String(redeemed.body.refresh_token),
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(redeemed.body.refresh_token);

    clock.advance(5_000);
    const replay = await poll(clientId, started.device_code);
    expect(replay.body.error).toBe("invalid_grant");
    const afterReplay = await server.fetch(`${server.url}/v2/chats`, {
      headers: { authorization: `Bearer ${refreshed.body.access_token}` },
    });
    expect(afterReplay.status).toBe(401);
  });

  it("deny: the next poll answers access_denied, then the code is gone", async () => {
    start();
    const clientId = await registerDeviceClient();
    const started = await startDevice(clientId);
    const { answerPage } = await decideInBrowser(started.user_code, "deny");
    expect(answerPage).toContain("Sign-in denied");
    clock.advance(5_000);
    expect((await poll(clientId, started.device_code)).body.error).toBe("access_denied");
    clock.advance(5_000);
    expect((await poll(clientId, started.device_code)).body.error).toBe("invalid_grant");
  });

  it("sends a signed-out person to sign in first, keeping the code", async () => {
    start();
    const clientId = await registerDeviceClient();
    const started = await startDevice(clientId);
    const browser = new TestBrowser(server.url, server.fetch);
    const response = await browser.get(started.verification_uri_complete);
    expect(response.status).toBe(303);
    const location = response.headers.get("location") ?? "";
    expect(location).toMatch(/^\/signin\?next=/);
    expect(decodeURIComponent(location)).toContain(started.user_code);
  });

  it("checks the CSRF token and refuses unknown codes on the page", async () => {
    start();
    const browser = new TestBrowser(server.url, server.fetch);
    await browser.signIn("dev");
    const page = await (await browser.get("/device")).text();
    expect(page).toContain("Enter the code your device shows");
    const forged = await browser.post("/device", { user_code: "BCDF-GHJK", csrf: "forged" });
    expect(forged.status).toBe(403);
    const unknown = await browser.post("/device", {
      user_code: "bcdf ghjk",
      csrf: hiddenField(page, "csrf"),
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("That code is not valid");
  });

  it("binds the consent step to the browser that entered the code", async () => {
    start();
    const clientId = await registerDeviceClient();
    const started = await startDevice(clientId);
    const browser = new TestBrowser(server.url, server.fetch);
    await browser.signIn("dev");
    const page = await (await browser.get("/device")).text();
    const entered = await browser.post("/device", {
      user_code: started.user_code,
      csrf: hiddenField(page, "csrf"),
    });
    const other = new TestBrowser(server.url, server.fetch);
    await other.signIn("dev");
    const elsewhere = await other.get(entered.headers.get("location") ?? "");
    expect(elsewhere.status).toBe(403);
    expect(await elsewhere.text()).toContain("started in another browser");
  });
});

describe("autoApprove", () => {
  it("approves the device request for that account at once: the first poll gets tokens", async () => {
    start({ autoApprove: "studio" });
    const clientId = await registerDeviceClient();
    const { device_code } = await startDevice(clientId);
    const redeemed = await poll(clientId, device_code);
    expect(redeemed.status).toBe(200);
    expect(redeemed.body.account).toBe("studio");
  });
});

describe("user code guessing (RFC 8628 §5.1)", () => {
  it("limits code entries per browser session at an address: past the limit even its right code waits (429)", async () => {
    start({ deviceAuthorization: { maxUserCodeAttempts: 3 } });
    const clientId = await registerDeviceClient();
    const started = await startDevice(clientId);
    const browser = new TestBrowser(server.url, server.fetch);
    await browser.signIn("dev");
    const csrf = hiddenField(await (await browser.get("/device")).text(), "csrf");
    const guesses = ["BCDF-GHJK", "BCDF-GHJL", "BCDF-GHJM"].filter((code) => code !== started.user_code);
    for (const code of guesses.slice(0, 3)) {
      expect((await browser.post("/device", { user_code: code, csrf })).status).toBe(400);
    }
    const limited = await browser.post("/device", { user_code: started.user_code, csrf });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await limited.text()).toContain("Too many codes");
    clock.advance(5 * 60 * 1000);
    expect((await browser.post("/device", { user_code: started.user_code, csrf })).status).toBe(303);
  });

  it("another person's wrong codes at the same address never refuse a right code from a fresh browser", async () => {
    start({ deviceAuthorization: { maxUserCodeAttempts: 3 } });
    const clientId = await registerDeviceClient();
    const started = await startDevice(clientId);
    const guesser = new TestBrowser(server.url, server.fetch);
    await guesser.signIn("dev");
    const csrf = hiddenField(await (await guesser.get("/device")).text(), "csrf");
    const guesses = ["BCDF-GHJK", "BCDF-GHJL", "BCDF-GHJM", "BCDF-GHJN"].filter(
      (code) => code !== started.user_code,
    );
    for (const code of guesses.slice(0, 3)) await guesser.post("/device", { user_code: code, csrf });
    expect((await guesser.post("/device", { user_code: guesses[0]!, csrf })).status).toBe(429);
    // Same address (the test's fetch has one), another browser: its right code goes on to consent.
    const fresh = new TestBrowser(server.url, server.fetch);
    await fresh.signIn("dev");
    const freshCsrf = hiddenField(await (await fresh.get("/device")).text(), "csrf");
    expect((await fresh.post("/device", { user_code: started.user_code, csrf: freshCsrf })).status).toBe(303);
  });
});

describe("bounds", () => {
  it("holds at most maxPending device authorizations: the oldest makes room", async () => {
    start({ deviceAuthorization: { maxPending: 2 } });
    const clientId = await registerDeviceClient();
    const first = await startDevice(clientId);
    const second = await startDevice(clientId);
    await startDevice(clientId);
    expect((await poll(clientId, first.device_code)).body.error).toBe("invalid_grant");
    expect((await poll(clientId, second.device_code)).body.error).toBe("authorization_pending");
  });
});
