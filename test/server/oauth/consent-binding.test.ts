/** A consent request works only in the browser that opened `/authorize` (against consent phishing); through the server's handler (no port). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import {
  approveConsentAt,
  authorizeUrl,
  CALLBACK_URL,
  hiddenField,
  pkcePair,
  postForm,
  registerClient,
  startInProcessTestServer,
  TestBrowser,
} from "./helpers.js";

const OTHER_BROWSER = "started in another browser";

let server: ReferenceServer;
let clientId: string;
beforeAll(async () => {
  server = startInProcessTestServer();
  clientId = (await registerClient(server.url, { client_name: "Bound Consent App" })).client_id;
});
afterAll(() => server.close());

/** `browser` opens /authorize: returns the consent path it was sent to, the PKCE verifier and the raw response. */
async function startIn(browser: TestBrowser, state = "st-bound") {
  const pkce = pkcePair();
  const response = await browser.get(
    authorizeUrl(server.url, {
      client_id: clientId,
      redirect_uri: CALLBACK_URL,
      code_challenge: pkce.challenge,
      state,
    }),
  );
  const location = new URL(response.headers.get("location") ?? "", server.url);
  return { consentPath: location.pathname + location.search, verifier: pkce.verifier, response };
}

/** A signed-in person's own consent form fields (their session's CSRF token), from a request of their own. */
async function ownCsrf(browser: TestBrowser): Promise<string> {
  const { consentPath } = await startIn(browser);
  return hiddenField(await (await browser.get(consentPath)).text(), "csrf");
}

describe("/authorize sets the binding cookie", () => {
  it("is HttpOnly, SameSite=Lax, lives as long as the pending request and holds no request data", async () => {
    const { response, consentPath } = await startIn(new TestBrowser(server.url));
    const requestId = new URL(consentPath, server.url).searchParams.get("request") ?? "";
    const binding = response.headers.getSetCookie().find((line) => line.includes(requestId));
    expect(binding).toBeDefined();
    expect(binding).toMatch(/HttpOnly/i);
    expect(binding).toMatch(/SameSite=Lax/i);
    expect(binding).toMatch(/Max-Age=\d+/i);
    const nonce = binding?.split(";")[0]?.split("=")[1] ?? "";
    expect(nonce.length).toBeGreaterThanOrEqual(32);
    expect(consentPath).not.toContain(nonce);
  });
});

describe("a consent link opened in another browser", () => {
  it("GET: shows the other-browser page, no form, instead of the consent page", async () => {
    const { consentPath } = await startIn(new TestBrowser(server.url));
    const victim = new TestBrowser(server.url);
    await victim.signIn("dev");
    const page = await victim.get(consentPath);
    expect(page.status).toBe(403);
    const text = await page.text();
    expect(text).toContain(OTHER_BROWSER);
    expect(text).toContain("Start again from your app");
    expect(text).not.toContain('name="csrf"');
  });

  it("GET while signed out: refused before the sign-in hop, and the sign-in hop itself refuses", async () => {
    const { consentPath } = await startIn(new TestBrowser(server.url));
    const victim = new TestBrowser(server.url);
    const first = await victim.get(consentPath);
    expect(first.status).toBe(403);
    expect(first.headers.get("location")).toBeNull();

    // Spellings express routes to the consent page too.
    for (const next of [
      consentPath,
      consentPath.replace("consent?", "consent/?"),
      consentPath.replace("/oauth/consent", "/OAuth/Consent"),
    ]) {
      const signInPage = await victim.get(`/signin?next=${encodeURIComponent(next)}`);
      expect(signInPage.status).toBe(403);
      expect(await signInPage.text()).toContain(OTHER_BROWSER);
    }

    const csrf = hiddenField(await (await victim.get("/signin")).text(), "csrf");
    const signIn = await victim.post("/signin", {
      username: "dev",
      password: "dev",
      csrf,
      next: consentPath,
    });
    expect(signIn.status).toBe(403);
    expect(signIn.headers.get("location")).toBeNull();
    expect(signIn.headers.getSetCookie().some((line) => line.startsWith("chat_ref_session="))).toBe(false);
  });

  it("POST: approving with the victim's own valid session and CSRF token grants nothing", async () => {
    const attacker = new TestBrowser(server.url);
    await attacker.signIn("guest");
    const { consentPath } = await startIn(attacker);
    const request = hiddenField(await (await attacker.get(consentPath)).text(), "request");

    const victim = new TestBrowser(server.url);
    await victim.signIn("dev");
    const forged = await victim.post("/oauth/consent", {
      request,
      csrf: await ownCsrf(victim),
      account: "acme",
      decision: "approve",
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get("location")).toBeNull();
    expect(await forged.text()).toContain(OTHER_BROWSER);
  });

  it("a cookie with the request's name but another value does not unlock it", async () => {
    const { consentPath, response } = await startIn(new TestBrowser(server.url));
    const cookieName = response.headers.getSetCookie()[0]?.split("=")[0] ?? "";
    const victim = new TestBrowser(server.url);
    await victim.signIn("dev");
    const page = await fetch(new URL(consentPath, server.url), {
      redirect: "manual",
      headers: { cookie: `${victim.cookies.header().cookie}; ${cookieName}=${"A".repeat(43)}` },
    });
    expect(page.status).toBe(403);
  });
});

describe("the browser that started the request", () => {
  it("signs in on the way and approves: the code exchanges for tokens, and the binding cookie is cleared", async () => {
    const browser = new TestBrowser(server.url);
    const { consentPath, verifier } = await startIn(browser, "st-same");
    const toSignIn = await browser.get(consentPath);
    expect(toSignIn.status).toBe(303);
    const signInPath = toSignIn.headers.get("location") ?? "";
    const signInPage = await browser.get(signInPath);
    expect(signInPage.status).toBe(200);
    const signedIn = await browser.post("/signin", {
      username: "dev",
      password: "dev",
      csrf: hiddenField(await signInPage.text(), "csrf"),
      next: consentPath,
    });
    expect(signedIn.headers.get("location")).toBe(consentPath);
    const approved = await approveConsentAt(browser, consentPath, "acme");
    expect(approved.status).toBe(303);
    const callback = new URL(approved.headers.get("location") ?? "");
    expect(callback.searchParams.get("state")).toBe("st-same");
    expect(approved.headers.getSetCookie().some((line) => /^chat_ref_authz_[^=]+=;/.test(line))).toBe(true);

    const tokens = await postForm(`${server.url}/token`, {
      grant_type: "authorization_code",
      client_id: clientId,
      code: callback.searchParams.get("code") ?? "",
      code_verifier: verifier,
      redirect_uri: CALLBACK_URL,
    });
    expect(tokens.status).toBe(200);
  });

  it("completes two sign-ins started in parallel, each with its own binding", async () => {
    const browser = new TestBrowser(server.url);
    await browser.signIn("dev");
    const first = await startIn(browser, "st-one");
    const second = await startIn(browser, "st-two");
    for (const { consentPath } of [second, first]) {
      const approved = await approveConsentAt(browser, consentPath, "acme");
      expect(new URL(approved.headers.get("location") ?? "").searchParams.get("code")).toBeTruthy();
    }
  });

  it("can deny, which also clears the binding", async () => {
    const browser = new TestBrowser(server.url);
    await browser.signIn("dev");
    const { consentPath } = await startIn(browser, "st-deny");
    const page = await (await browser.get(consentPath)).text();
    const denied = await browser.post("/oauth/consent", {
      request: hiddenField(page, "request"),
      csrf: hiddenField(page, "csrf"),
      decision: "deny",
    });
    expect(new URL(denied.headers.get("location") ?? "").searchParams.get("error")).toBe("access_denied");
    expect(denied.headers.getSetCookie().some((line) => /^chat_ref_authz_[^=]+=;/.test(line))).toBe(true);
  });
});
