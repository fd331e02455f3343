/** The loopback callback server (src/auth/loopback-callback.ts): where it listens, its ports and host names, its deadline, --callback-path and --auth-success-url; integration, since its listening socket is the subject. */
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AuthRequiredError } from "../../src/auth/index.js";
import { type LoopbackCallback, startLoopbackCallback } from "../../src/auth/loopback-callback.js";
import { answerCallback, beginSignIn } from "./fixtures/loopback.js";

let callback: LoopbackCallback | undefined;
afterEach(async () => {
  await callback?.close();
  callback = undefined;
});

describe("callback server listens on the literal 127.0.0.1", () => {
  it("uses a http://127.0.0.1:<port>/callback redirect URI", async () => {
    callback = await startLoopbackCallback();
    expect(callback.redirectUri).toBe(`http://127.0.0.1:${callback.port}/callback`);
  });

  it("falls back to another port when the preferred one is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const taken = (blocker.address() as { port: number }).port;
    try {
      callback = await startLoopbackCallback({ port: taken });
      expect(callback.port).not.toBe(taken);
      expect((await answerCallback(callback!, { state: "x" })).status).toBe(400);
    } finally {
      blocker.close();
    }
  });
});

describe("close() while a sign-in waits", () => {
  it("ends it at once (its deadline no longer keeps the process alive)", async () => {
    callback = await startLoopbackCallback();
    const pending = callback.begin("https://as.example/authorize", "s-closed", 600_000);
    await callback.close();
    callback = undefined;
    const error = await pending.answer.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthRequiredError);
    expect((error as Error).message).toMatch(/abandoned/);
  });
});

describe("callback timeout (--auth-timeout)", () => {
  it("rejects with AuthRequiredError (timeout) when no answer comes", async () => {
    callback = await startLoopbackCallback();
    const pending = callback.begin("https://as.example/authorize", "s3", 50);
    const error = await pending.answer.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthRequiredError);
    expect(error).toMatchObject({ reason: "timeout" });
    expect((error as Error).message).toMatch(/--auth-timeout/);
    // Timed out: neither its start page nor its state is known any more.
    expect((await fetch(pending.startUrl, { redirect: "manual" })).status).toBe(404);
    expect((await answerCallback(callback, { state: "s3", code: "late" })).status).toBe(400);
  });
});

describe("--host chooses the callback's host name", () => {
  it("localhost: a http://localhost redirect URI, answered on both loopback families", async () => {
    callback = await startLoopbackCallback({}, "localhost");
    expect(callback.redirectUri).toBe(`http://localhost:${callback.port}/callback`);
    const ipv4 = await fetch(`http://127.0.0.1:${callback.port}/callback?state=x`);
    expect(ipv4.status).toBe(400);
    const ipv6 = await fetch(`http://[::1]:${callback.port}/callback?state=x`).catch(() => undefined);
    // Machines without IPv6 loopback have only the IPv4 listener.
    if (ipv6) expect(ipv6.status).toBe(400);
  });
});

describe("the callback port", () => {
  it("an explicit port that is busy is an error naming it, never replaced", async () => {
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, "127.0.0.1", done));
    const taken = (holder.address() as { port: number }).port;
    try {
      const error = await startLoopbackCallback({ port: taken, explicit: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthRequiredError);
      expect((error as Error).message).toContain(`127.0.0.1:${taken} is in use`);
    } finally {
      holder.close();
    }
  });
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
});
