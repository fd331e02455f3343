import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AuthRequiredError } from "../../src/auth/index.js";
import { type LoopbackCallback, startLoopbackCallback } from "../../src/auth/loopback-callback.js";

let callback: LoopbackCallback | undefined;
afterEach(async () => {
  await callback?.close();
  callback = undefined;
});

function answer(query: Record<string, string>) {
  return fetch(`${callback!.redirectUri}?${new URLSearchParams(query)}`);
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
      callback = await startLoopbackCallback(taken);
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
    const result = callback.waitFor("right-state", 10_000);
    const wrong = await answer({ state: "wrong-state", code: "attacker-code" });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get("cache-control")).toBe("no-store");
    expect((await answer({ code: "no-state" })).status).toBe(400);
    const right = await answer({ state: "right-state", code: "the-code" });
    expect(right.status).toBe(200);
    expect(right.headers.get("cache-control")).toBe("no-store");
    expect(right.headers.get("content-type")).toMatch(/^text\/html/);
    await expect(result).resolves.toEqual({ state: "right-state", code: "the-code" });
  });

  it("accepts a state only once (a replay gets 400)", async () => {
    callback = await startLoopbackCallback();
    const result = callback.waitFor("s1", 10_000);
    expect((await answer({ state: "s1", code: "c1" })).status).toBe(200);
    await result;
    expect((await answer({ state: "s1", code: "c2" })).status).toBe(400);
  });
});

describe("callback with error=access_denied", () => {
  it("ends the flow with AuthRequiredError (denied) and a plain page", async () => {
    callback = await startLoopbackCallback();
    const result = callback.waitFor("s2", 10_000);
    result.catch(() => {});
    const page = await answer({ state: "s2", error: "access_denied" });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/cancelled/i);
    await expect(result).rejects.toMatchObject({ name: "AuthRequiredError", reason: "denied" });
  });
});

describe("callback timeout (--auth-timeout)", () => {
  it("rejects with AuthRequiredError (timeout) when no answer comes", async () => {
    callback = await startLoopbackCallback();
    const error = await callback.waitFor("s3", 50).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthRequiredError);
    expect(error).toMatchObject({ reason: "timeout" });
    expect((error as Error).message).toMatch(/--auth-timeout/);
  });
});
