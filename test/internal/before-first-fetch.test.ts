/** The bins' hook before the first platform fetch: runs once, before that request is sent, and only for the platform fetch. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { proxyAwareFetch, runBeforeFirstPlatformFetch } from "../../src/internal/proxy.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("runBeforeFirstPlatformFetch", () => {
  it("runs the hook once, just before the first request through the platform fetch", async () => {
    const events: string[] = [];
    vi.stubGlobal("fetch", async (input: string | URL | Request) => {
      events.push(`fetch ${String(input)}`);
      return new Response("{}");
    });
    runBeforeFirstPlatformFetch(() => events.push("hook"));
    expect(events).toEqual([]);

    const send = proxyAwareFetch({ env: {} });
    await send("http://127.0.0.1:9/a");
    await send("http://127.0.0.1:9/b");
    await proxyAwareFetch({ env: {} })("http://127.0.0.1:9/c");

    expect(events).toEqual([
      "hook",
      "fetch http://127.0.0.1:9/a",
      "fetch http://127.0.0.1:9/b",
      "fetch http://127.0.0.1:9/c",
    ]);
  });

  it("leaves the hook waiting while requests go through a fetch of the caller's own", async () => {
    const platform = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", platform);
    const hook = vi.fn();
    runBeforeFirstPlatformFetch(hook);

    await proxyAwareFetch({ env: {}, fetch: async () => new Response("{}") })("http://127.0.0.1:9/own");
    expect(hook).not.toHaveBeenCalled();

    await proxyAwareFetch({ env: {} })("http://127.0.0.1:9/platform");
    expect(hook).toHaveBeenCalledOnce();
    expect(platform).toHaveBeenCalledOnce();
  });
});
