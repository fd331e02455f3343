/** Sign-in with a device code (src/auth/session/device-sign-in.ts) through OAuthSession against the reference server: what the person sees, polling, and each way it ends. */
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SignInWaitingError } from "../../../src/auth/errors.js";
import { AuthRequiredError, OAuthSession, type OAuthSessionOptions } from "../../../src/auth/index.js";
import { loginKey, loginPaths } from "../../../src/auth/login-key.js";
import { StoredLoginSchema } from "../../../src/auth/stored-login.js";
import {
  type ReferenceServer,
  type ReferenceServerOptions,
  startReferenceServer,
} from "../../../src/server/index.js";
import { hiddenField, TestBrowser } from "../../server/oauth/helpers.js";
import { scratchDir } from "../../support/scratch-dir.js";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * The waits between polls (the only `node:timers/promises` sleeps of the flow) are recorded and skipped: each moves
 * the clock that the client's deadline and the server's codes and polling pace read (`Date.now`) on by its length,
 * so intervals, `slow_down`, lifetimes and `--auth-timeout` play out as they would, without the wall-clock wait.
 */
const pollWaits = vi.hoisted(() => ({ requestedMs: [] as number[], skippedMs: 0 }));
vi.mock(import("node:timers/promises"), async (importOriginal) => {
  const original = await importOriginal();
  const skipped = async (ms = 0) => {
    pollWaits.requestedMs.push(ms);
    pollWaits.skippedMs += ms;
    // A short real pause still lets the person's browser requests in between polls.
    await original.setTimeout(10);
  };
  return { ...original, setTimeout: skipped as typeof original.setTimeout };
});
const realNow = Date.now.bind(Date);

let server: ReferenceServer | undefined;
beforeEach(() => {
  pollWaits.requestedMs = [];
  pollWaits.skippedMs = 0;
  vi.spyOn(Date, "now").mockImplementation(() => realNow() + pollWaits.skippedMs);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
});

async function start(options: ReferenceServerOptions = {}) {
  server = await startReferenceServer({
    rateLimit: false,
    oauthRateLimit: false,
    oauthNow: () => Date.now(),
    deviceAuthorization: { intervalSeconds: 1 },
    ...options,
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

function deviceSession(extra: Partial<OAuthSessionOptions> = {}) {
  const configDir = scratchDir("cmb-device-");
  const serverUrl = server!.mcpUrl;
  const session = new OAuthSession({
    serverUrl,
    configDir,
    tokenStore: "file",
    // Skipped polls pass the clock quickly while a person decides: the default wait leaves them time.
    authTimeoutMs: 300_000,
    deviceCode: true,
    loginCommand: "chat-mcp-bridge login --device-code <url>",
    env: { PATH: process.env.PATH ?? "" },
    ...extra,
  });
  const stored = () =>
    StoredLoginSchema.parse(
      JSON.parse(readFileSync(loginPaths(configDir, loginKey(serverUrl)).file, "utf8")),
    );
  return { session, stored };
}

/** Resolves with the URL and code the sign-in printed, once it has printed them. */
async function shownCode(stderr: () => string): Promise<{ url: string; code: string }> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const match = /open this URL in a browser on any device:\n {2}(\S+)\n.* ([A-Z]{4}-[A-Z]{4})\n/.exec(
      stderr(),
    );
    if (match) return { url: match[1] as string, code: match[2] as string };
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`no device code shown: ${stderr()}`);
}

/** A person signed in as dev opens the URL, continues with the code and decides on the consent page. */
async function decide(url: string, decision: "approve" | "deny", account = "acme") {
  const browser = new TestBrowser(server!.url);
  await browser.signIn("dev");
  const form = await (await browser.get(url)).text();
  const entered = await browser.post("/device", {
    user_code: /name="user_code" value="([^"]*)"/.exec(form)?.[1] ?? "",
    csrf: hiddenField(form, "csrf"),
  });
  const consent = await (await browser.get(entered.headers.get("location") ?? "")).text();
  const answer = await browser.post("/oauth/consent", {
    request: hiddenField(consent, "request"),
    csrf: hiddenField(consent, "csrf"),
    account,
    decision,
  });
  expect(answer.status).toBe(200);
}

describe("--device-code: the person approves in a browser anywhere", () => {
  it("shows verification_uri_complete and the code, polls, and stores the tokens and the account", async () => {
    await start();
    const stderr = captureStderr();
    const { session, stored } = deviceSession();
    const signingIn = session.signIn();
    const { url, code } = await shownCode(stderr);
    expect(url).toBe(`${server!.url}/device?user_code=${code}`);
    expect(stderr()).toContain(`and check that it shows the code ${code}`);
    await decide(url, "approve", "acme");
    const summary = await signingIn;
    expect(summary.storedIn).toBe("file");
    const login = stored();
    expect(login.tokens?.account).toBe("acme");
    expect(login.client?.grant_types).toContain(DEVICE_GRANT);
    expect(login.client?.redirect_uris).toEqual([]);
    const tools = await fetch(server!.mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await session.accessToken()}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
    expect(tools.status).toBe(200);
    await tools.body?.cancel();
    expect(stderr()).not.toMatch(/chat_(at|rt|dc)_/);
  }, 30_000);

  it("a second device sign-in reuses the registration made for the device grant", async () => {
    await start({ autoApprove: "personal" });
    captureStderr();
    const { session, stored } = deviceSession();
    await session.signIn();
    const first = stored().client?.client_id;
    await session.signIn();
    expect(stored().client?.client_id).toBe(first);
  }, 30_000);

  it("deny: ends at once with access_denied, and no token is stored", async () => {
    await start();
    const stderr = captureStderr();
    const { session, stored } = deviceSession();
    const signingIn = session.signIn().catch((error: unknown) => error);
    await decide((await shownCode(stderr)).url, "deny");
    const error = await signingIn;
    expect(error).toBeInstanceOf(AuthRequiredError);
    expect((error as AuthRequiredError).reason).toBe("denied");
    expect((error as Error).message).toMatch(/denied in the browser \(access_denied\)/);
    expect(stored().tokens).toBeUndefined();
  }, 30_000);

  it("expired_token ends it with the reason, before --auth-timeout", async () => {
    await start({ deviceAuthorization: { intervalSeconds: 1, lifetimeSeconds: 2 } });
    captureStderr();
    // The client is told the code lives long, so only the server's expired_token can end the wait early.
    const longerLife = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      const url = input instanceof Request ? input.url : String(input);
      if (!url.endsWith("/device_authorization")) return response;
      return Response.json({ ...((await response.json()) as object), expires_in: 600 });
    };
    const { session } = deviceSession({ authTimeoutMs: 60_000, fetch: longerLife as typeof fetch });
    const started = Date.now();
    const error = await session.signIn().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/expired before it was approved \(expired_token\)/);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it("--auth-timeout bounds the whole wait", async () => {
    await start({ deviceAuthorization: { intervalSeconds: 1 } });
    captureStderr();
    const { session } = deviceSession({ authTimeoutMs: 2_500 });
    const error = await session.signIn().catch((e: unknown) => e);
    expect((error as AuthRequiredError).reason).toBe("timeout");
    expect((error as Error).message).toMatch(/not approved within 3 s/);
  }, 30_000);

  it("the bridge's relay is answered at once with the URL and the code, and the sign-in goes on", async () => {
    await start();
    const stderr = captureStderr();
    const { session } = deviceSession({ answerAtOnceWhenWaiting: true });
    const waiting = await session.recover({ status: 401, wwwAuthenticate: null }).catch((e: unknown) => e);
    expect(waiting).toBeInstanceOf(SignInWaitingError);
    const { url, code } = await shownCode(stderr);
    expect((waiting as SignInWaitingError).why).toBe("device-code");
    expect((waiting as SignInWaitingError).signInUrl).toBe(url);
    expect((waiting as Error).message).toContain(url);
    expect((waiting as Error).message).toContain(code);
    await decide(url, "approve");
    for (let waited = 0; !(await session.accessToken()) && waited < 10_000; waited += 100) {
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(await session.accessToken()).toMatch(/^chat_at_/);
  }, 30_000);
});

describe("polling as RFC 8628 says", () => {
  it("slow_down adds 5 s to the interval", async () => {
    await start({ autoApprove: "acme" });
    captureStderr();
    const polls: number[] = [];
    const slowDownOnce = async (input: string | URL | Request, init?: RequestInit) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.endsWith("/token")) {
        polls.push(Date.now());
        if (polls.length === 1) {
          return new Response(JSON.stringify({ error: "slow_down" }), {
            status: 400,
            headers: { "content-type": "application/json" },
          });
        }
      }
      return fetch(input, init);
    };
    const { session } = deviceSession({ fetch: slowDownOnce as typeof fetch });
    await session.signIn();
    expect(polls).toHaveLength(2);
    expect(pollWaits.requestedMs).toEqual([1_000, 6_000]);
    expect((polls[1] as number) - (polls[0] as number)).toBeGreaterThanOrEqual(5_900);
  }, 30_000);
});

describe("what the terminal shows is sanitised", () => {
  it("escape sequences in the server's code and URL are shown inert", async () => {
    await start({ autoApprove: "acme" });
    const stderr = captureStderr();
    const hostile = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      const url = input instanceof Request ? input.url : String(input);
      if (!url.endsWith("/device_authorization")) return response;
      const body = (await response.json()) as Record<string, unknown>;
      return Response.json({
        ...body,
        user_code: "\u001b]8;;https://evil.test\u0007CODE\u001b[2J",
      });
    };
    await deviceSession({ fetch: hostile as typeof fetch }).session.signIn();
    expect(stderr()).not.toContain("\u001b");
    expect(stderr()).toContain("^[]8;;https://evil.test^GCODE^[[2J");
  }, 30_000);

  it("names the site of the verification URL and shows its normalised href", async () => {
    await start({ autoApprove: "acme" });
    const stderr = captureStderr();
    const upperCase = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      const url = input instanceof Request ? input.url : String(input);
      if (!url.endsWith("/device_authorization")) return response;
      const body = (await response.json()) as Record<string, string>;
      return Response.json({
        ...body,
        verification_uri_complete: body.verification_uri_complete!.replace("http:", "HTTP:"),
      });
    };
    await deviceSession({ fetch: upperCase as typeof fetch }).session.signIn();
    const site = new URL(server!.url).host;
    expect(stderr()).toContain(
      `To sign in at ${site}, open this URL in a browser on any device:\n  http://${site}/device`,
    );
  }, 30_000);

  // The hostile answers: each URL is refused before anyone (stderr, the host's dialog) sees it.
  it.each([
    ["user info", "https://chat.example.com@evil.example/device?code=ABCD"],
    ["a raw right-to-left override", "https://evil.example/device\u202E?code=ABCD"],
    ["a raw newline", "https://evil.example/device\nTo sign in at chat.example.com"],
    ["a zero-width space", "https://evil.example/dev\u200Bice?code=ABCD"],
  ])(
    "refuses a verification_uri_complete with %s: the sign-in ends, nothing shown or prompted",
    async (_name, bad) => {
      await start({ autoApprove: "acme" });
      const stderr = captureStderr();
      const hostile = async (input: string | URL | Request, init?: RequestInit) => {
        const response = await fetch(input, init);
        const url = input instanceof Request ? input.url : String(input);
        if (!url.endsWith("/device_authorization")) return response;
        return Response.json({
          ...((await response.json()) as Record<string, unknown>),
          verification_uri_complete: bad,
        });
      };
      const prompts: unknown[] = [];
      const error = await deviceSession({
        fetch: hostile as typeof fetch,
        onSignInPrompt: (prompt) => prompts.push(prompt),
      })
        .session.signIn()
        .catch((e: unknown) => e);
      expect((error as AuthRequiredError).reason).toBe("refused");
      expect((error as Error).message).toMatch(/verification URL/);
      expect(prompts).toEqual([]);
      expect(stderr()).not.toContain("evil.example");
    },
    30_000,
  );
});

describe("without --device-code", () => {
  it("a server without device_authorization_endpoint makes --device-code a clear refusal", async () => {
    await start();
    captureStderr();
    const noDevice = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      const url = input instanceof Request ? input.url : String(input);
      if (!url.includes("/.well-known/oauth-authorization-server")) return response;
      const { device_authorization_endpoint: _, ...rest } = (await response.json()) as Record<
        string,
        unknown
      >;
      return Response.json(rest);
    };
    const error = await deviceSession({ fetch: noDevice as typeof fetch })
      .session.signIn()
      .catch((e: unknown) => e);
    expect((error as AuthRequiredError).reason).toBe("refused");
    expect((error as Error).message).toMatch(/does not offer sign-in with a device code/);
  });

  it("falls back to the device code when the $BROWSER command fails and the server offers it", async () => {
    await start({ autoApprove: "studio" });
    const stderr = captureStderr();
    const { session, stored } = deviceSession({
      deviceCode: false,
      env: { PATH: process.env.PATH ?? "", BROWSER: `"${process.execPath}" -e "process.exit(3)"` },
    });
    await session.signIn();
    expect(stderr()).toContain("Signing in with a device code instead.");
    expect(stderr()).toContain("open this URL in a browser on any device");
    expect(stored().tokens?.account).toBe("studio");
  }, 30_000);

  it("--no-browser keeps the loopback URL: no device code", async () => {
    await start({ autoApprove: "studio" });
    const stderr = captureStderr();
    const { session } = deviceSession({ deviceCode: false, openBrowser: false, authTimeoutMs: 1_000 });
    await session.signIn().catch(() => undefined);
    expect(stderr()).toMatch(/Open this URL to sign in at 127\.0\.0\.1:\d+: http:\/\/127\.0\.0\.1:/);
    expect(stderr()).not.toContain("device code");
  }, 30_000);
});
