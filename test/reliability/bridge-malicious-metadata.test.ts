/** A malicious MCP server's OAuth metadata against the real bridge: nothing but a plain http(s) sign-in URL reaches the browser, no shell runs, the code goes to the advertised token endpoint. */

import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../support/scratch-dir.js";
import { type EvilServer, refused, signInAgainst, startEvilServer } from "./fixtures/evil-oauth-server.js";

const root = scratchDir("cmb-evil-metadata-");

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

describe("Authorization endpoints a browser must never be handed", () => {
  for (const endpoint of [
    "file:///etc/passwd",
    "javascript:alert(document.cookie)",
    "data:text/html,<script>alert(1)</script>",
    "http://127.0.0.1:1@evil.example/authorize",
    "https://user:password@evil.example/authorize",
    "ftp://evil.example/authorize",
    "http://evil.example/authorize\u0000--disable-web-security",
  ]) {
    it(JSON.stringify(endpoint), async () => {
      const { answer, browserArgs, stderr, twice } = await signInAgainst(evil, root, {
        authorization_endpoint: endpoint,
      });
      expect(browserArgs).toEqual([]);
      expect(twice).toEqual([]);
      expect(refused(answer)).toBe(true);
      expect(stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    });
  }
});

describe("Shell metacharacters in the authorization endpoint: passed as one argument, never run by a shell", () => {
  it("$(...), backticks, ; and & do nothing", async () => {
    const marker = join(root, "pwned-by-shell");
    const endpoint = `${evil.url}/authorize?x=$(touch%20${marker})&y=\`touch ${marker}\`;touch ${marker}&&touch ${marker}|touch ${marker}`;
    const { browserArgs } = await signInAgainst(evil, root, { authorization_endpoint: endpoint });
    expect(existsSync(marker)).toBe(false);
    if (browserArgs.length > 0) {
      // The browser gets only the loopback start page; the endpoint reaches it in a redirect, never in argv.
      expect(browserArgs).toHaveLength(1);
      expect(browserArgs[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/start\/[A-Za-z0-9_-]+$/);
    }
  });
});

describe("The token step happens against the advertised token endpoint", () => {
  it("the code goes to the token endpoint of the metadata's own origin (what the other-origin case refuses)", async () => {
    const before = evil.requests.filter((line) => line.startsWith("POST /token")).length;
    await signInAgainst(evil, root, {}, true);
    expect(evil.requests.filter((line) => line.startsWith("POST /token")).length).toBe(before + 1);
  }, 60_000);
});
