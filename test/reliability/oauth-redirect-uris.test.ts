/**
 * Registration and /authorize refuse redirect URIs that no legitimate client needs and that
 * RFC 6749 §3.1.2 / OAuth 2.1 §2.3.1 / RFC 8252 §7 forbid (found by this suite, fixed in src/server/oauth); on the
 * reference server's handler in-process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../support/reference-request.js";
import {
  authorize,
  authorizeParams,
  newPkce,
  registerClient,
  registerPublicClient,
} from "./fixtures/oauth-flow.js";

let server: RequestableReferenceServer;
beforeAll(() => {
  server = createRequestableReferenceServer({ autoApprove: "acme", rateLimit: false });
});
afterAll(() => server?.close());

describe("Registration refuses redirect URIs that only an attacker would use", () => {
  for (const uri of [
    // RFC 6749 §3.1.2: the redirection endpoint URI MUST NOT include a fragment.
    "http://127.0.0.1:49152/callback#fragment",
    // Not a place a client can receive a code: local files and browser-internal pages.
    "file:///etc/passwd",
    "about:blank",
    "chrome://settings",
    // OAuth 2.1 §2.3.1: plain http only for loopback.
    "http://evil.example/callback",
  ]) {
    it(uri, async () => {
      const reply = await registerClient(server, { redirect_uris: [uri] });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe("invalid_redirect_uri");
    });
  }
});

describe("/authorize refuses a registered loopback redirect URI with a fragment added", () => {
  it("http://127.0.0.1:49152/callback#frag", async () => {
    const client = await registerPublicClient(server, "http://127.0.0.1:49152/callback");
    const reply = await authorize(
      server,
      authorizeParams(client, newPkce(), { redirect_uri: "http://127.0.0.1:49152/callback#frag" }),
    );
    expect(reply.status).toBe(400);
    expect(reply.location).toBeNull();
  });
});
