/** What a session learned of its server (src/auth/session/server-metadata.ts): asked once and shared, asked again after a failure or a refusal. */
import { describe, expect, it } from "vitest";
import { ServerMetadata } from "../../../src/auth/session/context.js";
import { createTinyOAuthServer, type TinyOAuthServer } from "../fixtures/tiny-oauth-server.js";

/** The tiny server's handler, counting the protected-resource metadata requests and failing every one while `failing`. */
function countingFetch(tiny: TinyOAuthServer) {
  const counter = { resourceMetadata: 0, failing: false };
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.includes("/.well-known/oauth-protected-resource")) counter.resourceMetadata++;
    if (counter.failing) throw new TypeError("fetch failed");
    return tiny.fetch(input, init);
  }) as typeof fetch;
  return { fetchFn, counter };
}

async function metadataOf() {
  const tiny = createTinyOAuthServer();
  const { fetchFn, counter } = countingFetch(tiny);
  const metadata = new ServerMetadata(tiny.resourceUrl, { fetchFn, allowHttp: true, log: () => {} });
  return { metadata, counter, tiny };
}

describe("asked once, shared", () => {
  it("concurrent and later callers get the same discovery", async () => {
    const { metadata, counter, tiny } = await metadataOf();
    const [a, b] = await Promise.all([metadata.get(), metadata.get()]);
    expect(a).toBe(b);
    expect(await metadata.get()).toBe(a);
    expect(counter.resourceMetadata).toBe(1);
    expect(a.resource).toBe(tiny.resourceUrl);
  });

  it("a challenge naming its resource metadata URL is a different question", async () => {
    const { metadata, counter, tiny } = await metadataOf();
    await metadata.get();
    await metadata.get(`${tiny.url}/.well-known/oauth-protected-resource/mcp`);
    expect(counter.resourceMetadata).toBe(2);
  });
});

describe("asked again", () => {
  it("after a failed discovery: the failure is not kept", async () => {
    const { metadata, counter } = await metadataOf();
    counter.failing = true;
    await expect(metadata.get()).rejects.toThrow();
    counter.failing = false;
    const asked = counter.resourceMetadata;
    await expect(metadata.get()).resolves.toMatchObject({ authorizationServerUrl: expect.any(String) });
    expect(counter.resourceMetadata).toBeGreaterThan(asked);
  });

  it("after forget() (a refused token: the server may have moved, SEP-2352)", async () => {
    const { metadata, counter } = await metadataOf();
    const first = await metadata.get();
    metadata.forget();
    const second = await metadata.get();
    expect(second).not.toBe(first);
    expect(counter.resourceMetadata).toBe(2);
  });
});
