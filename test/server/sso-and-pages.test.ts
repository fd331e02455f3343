/** SSO for secure-corp (403 -> complete the page as a signed-in member -> retry) and the members-only chat pages. */
import { describe, expect, it } from "vitest";
import { useRequestableReferenceServer } from "../support/reference-request.js";
import { apiFor, Browser, hiddenField } from "./helpers.js";

const ctx = useRequestableReferenceServer();

describe("Team requires SSO: 403 sso_required with a re-authentication link, then retry succeeds", () => {
  it("completes SSO on the server's page as signed-in dev, then the same call answers 200", async () => {
    const api = apiFor(ctx.server, "secure-corp");
    const refused = await api.get("/v2/chats");
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("sso_required");
    const reauthUrl: string = refused.body.error.reauthUrl;
    expect(reauthUrl.startsWith(`${ctx.server.url}/sso/reauth?`)).toBe(true);
    expect(reauthUrl).not.toContain(ctx.server.apiKeys["secure-corp"]);

    const browser = new Browser(ctx.server);
    const anonymous = await browser.get(reauthUrl);
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toMatch(/^\/signin\?next=/);

    await browser.signIn("dev", "dev");
    const page = await browser.get(reauthUrl);
    expect(page.status).toBe(200);
    const completed = await browser.post("/sso/reauth", {
      ticket: hiddenField(page.text, "ticket"),
      csrf: hiddenField(page.text, "csrf"),
    });
    expect(completed.status).toBe(200);

    const retried = await api.get("/v2/chats");
    expect(retried.status).toBe(200);
  });
});

describe("SSO page refuses what it must", () => {
  const fresh = useRequestableReferenceServer();

  async function reauthUrl(): Promise<string> {
    const reply = await apiFor(fresh.server, "secure-corp").get("/v2/chats");
    expect(reply.status).toBe(403);
    return reply.body.error.reauthUrl;
  }

  it("the same link is handed out while it is pending (no token in it)", async () => {
    const link = await reauthUrl();
    expect(await reauthUrl()).toBe(link);
    expect(link).not.toContain(fresh.server.apiKeys["secure-corp"]);
  });

  it("completion without the session's CSRF token is refused", async () => {
    const browser = new Browser(fresh.server);
    await browser.signIn("dev", "dev");
    const page = await browser.get(await reauthUrl());
    const forged = await browser.post("/sso/reauth", {
      ticket: hiddenField(page.text, "ticket"),
      csrf: "forged",
    });
    expect(forged.status).toBe(403);
    expect((await apiFor(fresh.server, "secure-corp").get("/v2/chats")).status).toBe(403);
  });

  it("guest, who is not a member of secure-corp, cannot complete it", async () => {
    const browser = new Browser(fresh.server);
    await browser.signIn("guest", "guest");
    const page = await browser.get(await reauthUrl());
    const post = await browser.post("/sso/reauth", {
      ticket: hiddenField(page.text, "ticket"),
      csrf: hiddenField(page.text, "csrf"),
    });
    expect(post.status).toBe(403);
    expect((await apiFor(fresh.server, "secure-corp").get("/v2/chats")).status).toBe(403);
  });

  it("an unknown ticket shows an expired-link page", async () => {
    const browser = new Browser(fresh.server);
    await browser.signIn("dev", "dev");
    expect((await browser.get("/sso/reauth?ticket=made-up")).status).toBe(404);
  });
});

describe("Sign-in page", () => {
  it("sets an HttpOnly SameSite=Lax session cookie and redirects to a same-origin next path only", async () => {
    const page = await ctx.server.request(`/signin?next=${encodeURIComponent("//evil.example/x")}`);
    const text = await page.text();
    expect(text).toContain('name="next" value="/"');
    const csrfCookie = page.headers.getSetCookie()[0]!.split(";")[0]!;
    const response = await ctx.server.request(`/signin`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie },
      body: new URLSearchParams({
        csrf: hiddenField(text, "csrf"),
        username: "dev",
        password: "dev",
        next: "https://evil.example/",
      }).toString(),
    });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/");
    const session = response.headers.getSetCookie().find((line) => line.startsWith("chat_ref_session="));
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
  });

  it("refuses a wrong password and a missing CSRF token", async () => {
    const browser = new Browser(ctx.server);
    const page = await browser.get("/signin");
    const wrong = await browser.post("/signin", {
      csrf: hiddenField(page.text, "csrf"),
      username: "dev",
      password: "nope",
    });
    expect(wrong.status).toBe(401);
    const noCsrf = await browser.post("/signin", { username: "dev", password: "dev" });
    expect(noCsrf.status).toBe(403);
  });
});

describe("Chat page and preview page: shown only to a signed-in member of the chat's account or team", () => {
  it("member: the transcript (escaped) and what the chat waits for", async () => {
    const api = apiFor(ctx.server, "acme");
    const chat = (await api.post("/v2/chats", { message: "<script>alert(1)</script> add a database" })).body;
    const browser = new Browser(ctx.server);
    await browser.signIn("dev", "dev");
    const path = new URL(chat.url).pathname;
    const page = await browser.get(path);
    expect(page.status).toBe(200);
    expect(page.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page.text).not.toContain("<script>alert(1)");
    expect(page.text).toContain("Neon");
    expect(page.text).toContain("confirmed-steps");
    const preview = await browser.get(
      new URL((await api.get(`/v2/chats/${chat.id}/preview`)).body.url).pathname,
    );
    expect(preview.status).toBe(200);
  });

  it("anyone not signed in: the sign-in page, never the chat", async () => {
    const chat = (await apiFor(ctx.server, "acme").post("/v2/chats", { message: "secret plans" })).body;
    const browser = new Browser(ctx.server);
    for (const path of [new URL(chat.url).pathname, `${new URL(chat.url).pathname}/preview`]) {
      const page = await browser.get(path);
      expect(page.status).toBe(303);
      expect(page.location).toBe(`/signin?next=${encodeURIComponent(path)}`);
      expect(page.text).not.toContain("secret plans");
    }
  });

  it("signed-in non-member (guest on an acme chat): 404 without chat content", async () => {
    const chat = (await apiFor(ctx.server, "acme").post("/v2/chats", { message: "secret plans" })).body;
    const browser = new Browser(ctx.server);
    await browser.signIn("guest", "guest");
    const page = await browser.get(new URL(chat.url).pathname);
    expect(page.status).toBe(404);
    expect(page.text).not.toContain("secret plans");
  });

  it("the chat under another slug's path is not shown", async () => {
    const chat = (await apiFor(ctx.server, "acme").post("/v2/chats", { message: "secret plans" })).body;
    const browser = new Browser(ctx.server);
    await browser.signIn("dev", "dev");
    const page = await browser.get(`/personal/chats/${chat.id}`);
    expect(page.status).toBe(404);
  });

  it("a studio member (guest) sees studio chats", async () => {
    const chat = (await apiFor(ctx.server, "studio").post("/v2/chats", { message: "studio work" })).body;
    const browser = new Browser(ctx.server);
    await browser.signIn("guest", "guest");
    const page = await browser.get(new URL(chat.url).pathname);
    expect(page.status).toBe(200);
    expect(page.text).toContain("studio work");
  });
});
