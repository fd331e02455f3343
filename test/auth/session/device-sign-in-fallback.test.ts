/** When a browser sign-in turns to the device code, and when it keeps the loopback URL: integration, since the loopback callback listens and $BROWSER is a process. */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { OAuthSessionOptions } from "../../../src/auth/index.js";
import {
  createRequestableReferenceServer,
  type RequestableReferenceServer,
} from "../../support/reference-request.js";
import { referenceSession } from "./helpers.js";

let server: RequestableReferenceServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
});

/** The reference server's handler answers the OAuth requests; only the loopback callback is a socket. */
function start(autoApprove: string) {
  server = createRequestableReferenceServer({
    rateLimit: false,
    oauthRateLimit: false,
    deviceAuthorization: { intervalSeconds: 1 },
    autoApprove,
  });
  return server;
}

/** Everything the sign-in writes to stderr, kept (and not shown). */
function captureStderr(): () => string {
  let written = "";
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    written += String(chunk);
    return true;
  });
  return () => written;
}

/** A session that signs in with a browser (on the loopback callback), falling back as the sign-in decides. */
function browserSession(extra: Partial<OAuthSessionOptions>) {
  return referenceSession(server!, { authTimeoutMs: 30_000, deviceCode: false, ...extra });
}

describe("without --device-code", () => {
  it("falls back to the device code when the $BROWSER command fails and the server offers it", async () => {
    start("studio");
    const stderr = captureStderr();
    const { session, stored } = browserSession({
      env: { PATH: process.env.PATH ?? "", BROWSER: `"${process.execPath}" -e "process.exit(3)"` },
    });
    await session.signIn();
    expect(stderr()).toContain("Signing in with a device code instead.");
    expect(stderr()).toContain("open this URL in a browser on any device");
    expect(stored().tokens?.account).toBe("studio");
  }, 30_000);

  it("--no-browser keeps the loopback URL: no device code", async () => {
    start("studio");
    const stderr = captureStderr();
    const { session } = browserSession({ openBrowser: false, authTimeoutMs: 1_000 });
    await session.signIn().catch(() => undefined);
    expect(stderr()).toMatch(/Open this URL to sign in at 127\.0\.0\.1:\d+: http:\/\/127\.0\.0\.1:/);
    expect(stderr()).not.toContain("device code");
  }, 30_000);
});
