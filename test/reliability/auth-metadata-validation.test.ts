/** Authorization server metadata the bridge refuses: an issuer that is not its authorization server (RFC 8414 §3.3), a token endpoint on another origin. */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../support/scratch-dir.js";
import { type EvilServer, refused, signInAgainst, startEvilServer } from "./fixtures/evil-oauth-server.js";

const root = scratchDir("cmb-metadata-");
let evil: EvilServer;
let elsewhere: EvilServer;
beforeAll(async () => {
  evil = await startEvilServer();
  elsewhere = await startEvilServer();
});
afterAll(async () => {
  await evil?.close();
  await elsewhere?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("Authorization server metadata the bridge must refuse", () => {
  it("a token endpoint on another origin gets no request (no code, no verifier)", async () => {
    const before = elsewhere.requests.length;
    const { answer } = await signInAgainst(evil, root, { token_endpoint: `${elsewhere.url}/token` }, true);
    expect(elsewhere.requests.length).toBe(before);
    expect(refused(answer)).toBe(true);
  });

  it("an issuer that is not the authorization server's URL is refused before any browser opens", async () => {
    const { answer, browserArgs } = await signInAgainst(evil, root, { issuer: "http://evil.example" });
    expect(browserArgs).toEqual([]);
    expect(refused(answer)).toBe(true);
  });
});
