import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AuthRequiredError } from "../../src/auth/index.js";
import { type LoopbackCallback, startLoopbackCallback } from "../../src/auth/loopback-callback.js";

let callback: LoopbackCallback | undefined;
afterEach(async () => {
  await callback?.close();
  callback = undefined;
});

function answer(query: Record<string, string>, cookie?: string) {
  return fetch(`${callback!.redirectUri}?${new URLSearchParams(query)}`, {
    headers: cookie ? { cookie } : {},
  });
}

/** Begins a flow for `state` and opens its start page as the user's browser would: resolves with its cookie. */
async function begin(state: string, timeoutMs = 10_000) {
  const pending = callback!.begin(`https://as.example/authorize?state=${state}`, state, timeoutMs);
  pending.answer.catch(() => {});
  const started = await fetch(pending.startUrl, { redirect: "manual" });
  const cookie = started.headers.get("set-cookie")?.split(";")[0] ?? "";
  return { ...pending, started, cookie };
}

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
      expect((await answer({ state: "x" })).status).toBe(400);
    } finally {
      blocker.close();
    }
  });
});

describe("callback with the wrong or missing state is rejected and the flow keeps waiting", () => {
  it("answers 400 to a wrong state, then completes with the right one", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await begin("right-state");
    const wrong = await answer({ state: "wrong-state", code: "attacker-code" }, cookie);
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get("cache-control")).toBe("no-store");
    expect((await answer({ code: "no-state" }, cookie)).status).toBe(400);
    const right = await answer({ state: "right-state", code: "the-code" }, cookie);
    expect(right.status).toBe(200);
    expect(right.headers.get("cache-control")).toBe("no-store");
    expect(right.headers.get("content-type")).toMatch(/^text\/html/);
    await expect(result).resolves.toEqual({ state: "right-state", code: "the-code" });
  });

  it("accepts a state only once (a replay gets 400)", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await begin("s1");
    expect((await answer({ state: "s1", code: "c1" }, cookie)).status).toBe(200);
    await result;
    expect((await answer({ state: "s1", code: "c2" }, cookie)).status).toBe(400);
  });
});

describe("callback with error=access_denied", () => {
  it("ends the flow with AuthRequiredError (denied) and a plain page", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await begin("s2");
    const page = await answer({ state: "s2", error: "access_denied" }, cookie);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/cancelled/i);
    await expect(result).rejects.toMatchObject({ name: "AuthRequiredError", reason: "denied" });
  });
});

describe("callback timeout (--auth-timeout)", () => {
  it("rejects with AuthRequiredError (timeout) when no answer comes", async () => {
    callback = await startLoopbackCallback();
    const error = await callback
      .begin("https://as.example/authorize", "s3", 50)
      .answer.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthRequiredError);
    expect(error).toMatchObject({ reason: "timeout" });
    expect((error as Error).message).toMatch(/--auth-timeout/);
  });
});

describe("the start page: the sign-in belongs to the browser that opened it first", () => {
  it("redirects once to the authorization URL with an HttpOnly cookie and no referrer", async () => {
    callback = await startLoopbackCallback();
    const { started, cookie } = await begin("s4");
    expect(started.status).toBe(302);
    expect(started.headers.get("location")).toBe("https://as.example/authorize?state=s4");
    expect(started.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Lax/);
    expect(started.headers.get("referrer-policy")).toBe("no-referrer");
    expect(started.headers.get("cache-control")).toBe("no-store");
    expect(cookie).toMatch(new RegExp(`^chat_mcp_sign_in_${callback.port}=`));
  });

  it("refuses an answer without the start page's cookie, and keeps waiting for the real one", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await begin("s5");
    expect((await answer({ state: "s5", code: "attacker-code" })).status).toBe(403);
    const forged = `${cookie.split("=")[0]}=${"A".repeat(43)}`;
    expect((await answer({ state: "s5", code: "attacker-code" }, forged)).status).toBe(403);
    expect((await answer({ state: "s5", code: "the-code" }, cookie)).status).toBe(200);
    await expect(result).resolves.toEqual({ state: "s5", code: "the-code" });
  });

  it("a start page opened twice stops the sign-in: whoever opened it first cannot finish it", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, startUrl, cookie } = await begin("s6");
    const second = await fetch(startUrl, { redirect: "manual" });
    expect(second.status).toBe(409);
    expect(second.headers.get("location")).toBeNull();
    await expect(result).rejects.toMatchObject({ name: "AuthRequiredError", reason: "refused" });
    expect((await answer({ state: "s6", code: "c" }, cookie)).status).toBe(400);
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

describe("RFC 9207: the answer's iss, checked before its code or error is looked at", () => {
  async function beginChecked(state: string, issuer: string, advertised: boolean) {
    const pending = callback!.begin(`https://as.example/authorize?state=${state}`, state, 10_000, {
      acceptsIssuer: (iss) => (iss === undefined ? !advertised : iss === issuer),
    });
    pending.answer.catch(() => {});
    const started = await fetch(pending.startUrl, { redirect: "manual" });
    return { ...pending, cookie: started.headers.get("set-cookie")?.split(";")[0] ?? "" };
  }

  it("passes a matching iss on with the code", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginChecked("i1", "https://as.example", true);
    expect((await answer({ state: "i1", code: "c", iss: "https://as.example" }, cookie)).status).toBe(200);
    await expect(result).resolves.toEqual({ state: "i1", code: "c", iss: "https://as.example" });
  });

  it("refuses another issuer, showing none of the answer's error text", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginChecked("i2", "https://as.example", false);
    const page = await answer(
      { state: "i2", iss: "https://as.example/", error: "invalid_request", error_description: "evil-text" },
      cookie,
    );
    expect(page.status).toBe(400);
    expect(await page.text()).not.toContain("evil-text");
    const error = (await result.catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ name: "AuthRequiredError", reason: "refused" });
    expect(error.message).toMatch(/RFC 9207/);
    expect(error.message).not.toMatch(/evil-text|invalid_request/);
  });

  it("refuses an answer without iss when the server advertised it", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginChecked("i3", "https://as.example", true);
    expect((await answer({ state: "i3", code: "c" }, cookie)).status).toBe(400);
    await expect(result).rejects.toMatchObject({ reason: "refused" });
  });
});

describe("an answer without any cookie (an opener that drops cookies)", () => {
  it("is refused and reported at once through onAnswerWithoutCookie", async () => {
    callback = await startLoopbackCallback();
    let reported = 0;
    const pending = callback.begin("https://as.example/authorize?state=k1", "k1", 10_000, {
      onAnswerWithoutCookie: () => reported++,
    });
    pending.answer.catch(() => {});
    await fetch(pending.startUrl, { redirect: "manual" });
    expect((await answer({ state: "k1", code: "c" })).status).toBe(403);
    expect(reported).toBe(1);
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
