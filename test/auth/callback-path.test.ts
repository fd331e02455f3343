/** `--callback-path` and `--auth-success-url` on the loopback callback: the redirect URI's path, and where the browser lands after success. */
import { afterEach, describe, expect, it } from "vitest";
import { type LoopbackCallback, startLoopbackCallback } from "../../src/auth/loopback-callback.js";
import { callbackPathProblem, successUrlProblem } from "../../src/auth/loopback-requests.js";
import { answerCallback, beginSignIn } from "./fixtures/loopback.js";

let callback: LoopbackCallback | undefined;
afterEach(async () => {
  await callback?.close();
  callback = undefined;
});

describe("callbackPath (--callback-path)", () => {
  it("is the redirect URI's path, and the only path that takes an answer", async () => {
    callback = await startLoopbackCallback({}, "127.0.0.1", { callbackPath: "/oauth/callback" });
    expect(new URL(callback.redirectUri).pathname).toBe("/oauth/callback");
    const { answer, cookie } = await beginSignIn(callback, "s1");
    const elsewhere = await fetch(
      `${new URL(callback.redirectUri).origin}/callback?${new URLSearchParams({ state: "s1", code: "c" })}`,
      { headers: { cookie } },
    );
    expect(elsewhere.status).toBe(404);
    expect((await answerCallback(callback, { state: "s1", code: "the-code" }, cookie)).status).toBe(200);
    await expect(answer).resolves.toEqual({ state: "s1", code: "the-code" });
  });

  it("refuses a path that is not absolute, carries a query, or would shadow the start page", () => {
    expect(callbackPathProblem("oauth/callback")).toMatch(/start with "\/"/);
    expect(callbackPathProblem("/cb?x=1")).toMatch(/query/);
    expect(callbackPathProblem("/start/x")).toMatch(/start page/);
    expect(callbackPathProblem("/a b")).toMatch(/characters/);
    expect(callbackPathProblem("/oauth/callback")).toBeUndefined();
  });

  // A path the URL parser would rewrite never matches a request's path, and `/a/../start/x` is the start page.
  it.each([
    ["climbs to the start page", "/a/../start/x"],
    ["climbs with percent-encoded dots", "/a/%2e%2e/start/x"],
    ["climbs above the root", "/../callback"],
    ["has a dot segment", "/./callback"],
    ["ends in a dot segment", "/oauth/.."],
    ["has an empty segment", "/oauth//callback"],
  ])("refuses a path that %s, as not a plain path", (_name, path) => {
    expect(callbackPathProblem(path)).toMatch(/plain path/);
  });
});

describe("successUrl (--auth-success-url)", () => {
  it("sends the browser there after a successful answer, the start page's cookie cleared", async () => {
    callback = await startLoopbackCallback({}, "127.0.0.1", { successUrl: "https://example.com/done" });
    const { answer, cookie } = await beginSignIn(callback, "s2");
    const landed = await fetch(
      `${callback.redirectUri}?${new URLSearchParams({ state: "s2", code: "c2" })}`,
      { headers: { cookie }, redirect: "manual" },
    );
    expect(landed.status).toBe(302);
    expect(landed.headers.get("location")).toBe("https://example.com/done");
    expect(landed.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    await expect(answer).resolves.toMatchObject({ code: "c2" });
  });

  it("is not used for a denial: the person reads why on our page", async () => {
    callback = await startLoopbackCallback({}, "127.0.0.1", { successUrl: "https://example.com/done" });
    const { answer, cookie } = await beginSignIn(callback, "s3");
    const page = await answerCallback(callback, { state: "s3", error: "access_denied" }, cookie);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/cancelled/i);
    await expect(answer).rejects.toMatchObject({ reason: "denied" });
  });

  it("must be http(s) without credentials; plain http only to loopback", () => {
    expect(successUrlProblem("javascript:alert(1)")).toMatch(/http/);
    expect(successUrlProblem("file:///etc/passwd")).toMatch(/http/);
    expect(successUrlProblem("https://user:pw@example.com/")).toMatch(/credentials/);
    expect(successUrlProblem("http://example.com/done")).toMatch(/https/);
    expect(successUrlProblem("not a url")).toMatch(/URL/);
    expect(successUrlProblem("http://127.0.0.1:8080/ok")).toBeUndefined();
    expect(successUrlProblem("https://example.com/done?from=bridge")).toBeUndefined();
  });
});
