/** What the session door (src/auth/session/index.ts) loads: nothing of the OAuth flows for a saved, fresh token; each flow on first use. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { OAuthSession } from "../../../src/auth/session/index.js";
import { cleanUpSessions, setupInProcess } from "./helpers.js";

const loaded = vi.hoisted(() => new Set<string>());

// Each mock hands out the real module and records that something imported it.
vi.mock("@modelcontextprotocol/client", async (importOriginal) => {
  loaded.add("the SDK's OAuth client");
  return importOriginal();
});
vi.mock("zod", async (importOriginal) => {
  loaded.add("zod");
  return importOriginal();
});
vi.mock("../../../src/auth/discovery.js", async (importOriginal) => {
  loaded.add("discovery");
  return importOriginal();
});
vi.mock("../../../src/auth/loopback-callback.js", async (importOriginal) => {
  loaded.add("the loopback callback server");
  return importOriginal();
});

afterEach(cleanUpSessions);

describe("a bridge start with a saved login", () => {
  it("hands out a fresh saved token without loading the SDK, zod, discovery or the callback server", async () => {
    const t = setupInProcess();
    await t.writeStoredLogin({ accessToken: "saved-access", expiresAt: Date.now() + 3_600_000 });
    const session = new OAuthSession({
      serverUrl: t.tiny.resourceUrl,
      configDir: t.configDir,
      tokenStore: "file",
      fetch: t.tiny.fetch,
    });
    expect(await session.accessToken()).toBe("saved-access");
    expect([...loaded]).toEqual([]);
  });

  it("loads the refresh flow (and with it the SDK and discovery), not the callback server, once the token is due", async () => {
    const t = setupInProcess();
    await t.writeStoredLogin({ accessToken: "due-access", expiresAt: Date.now() - 1_000 });
    const session = new OAuthSession({
      serverUrl: t.tiny.resourceUrl,
      configDir: t.configDir,
      tokenStore: "file",
      fetch: t.tiny.fetch,
    });
    // The saved refresh token is unknown to the server: the answer does not matter here, what was loaded does.
    await session.accessToken();
    expect(loaded).toContain("the SDK's OAuth client");
    expect(loaded).toContain("discovery");
    expect(loaded).not.toContain("the loopback callback server");
  });
});
