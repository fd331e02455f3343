/** Sign-in with a device code (src/auth/session/device-sign-in.ts) through OAuthSession against the reference server's handler, in-process: what the person sees, polling, and each way it ends. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SignInWaitingError } from "../../../src/auth/errors.js";
import { AuthRequiredError, type OAuthSessionOptions } from "../../../src/auth/index.js";
import { hiddenField, TestBrowser } from "../../server/oauth/helpers.js";
import {
  createRequestableReferenceServer,
  type InProcessOptions,
  type RequestableReferenceServer,
} from "../../support/reference-request.js";
import { referenceSession } from "./helpers.js";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * The waits between polls (the only `node:timers/promises` sleeps of the flow) are recorded and skipped: each moves
 * the clock that the client's deadline and the server's codes and polling pace read (`Date.now`) on by its length,
 * so intervals, `slow_down`, lifetimes and `--auth-timeout` play out as they would, without the wall-clock wait.
 * While a person is to decide (`holdPolls`), a wait past the free ones is held until they have: the polls never race
 * the person's browser.
 */
const pollWaits = vi.hoisted(() => ({
  requestedMs: [] as number[],
  skippedMs: 0,
  hold: undefined as { free: number; held: () => void; decided: Promise<void> } | undefined,
}));
vi.mock(import("node:timers/promises"), async (importOriginal) => {
  const original = await importOriginal();
  const skipped = async (ms = 0) => {
    pollWaits.requestedMs.push(ms);
    pollWaits.skippedMs += ms;
    const hold = pollWaits.hold;
    if (!hold) return;
    if (hold.free > 0) {
      hold.free--;
      return;
    }
    hold.held();
    await hold.decided;
  };
  return { ...original, setTimeout: skipped as typeof original.setTimeout };
});
const realNow = Date.now.bind(Date);

/**
 * Holds the sign-in's waits after the first `free` until `decided()`: `held` settles once the client waits there
 * (every poll before it has been answered), the moment a person's decision cannot race a poll.
 */
function holdPolls(free = 0) {
  let held = () => {};
  let decided = () => {};
  const heldPromise = new Promise<void>((resolve) => {
    held = resolve;
  });
  const decidedPromise = new Promise<void>((resolve) => {
    decided = resolve;
  });
  pollWaits.hold = { free, held, decided: decidedPromise };
  return { held: heldPromise, decided };
}

let server: RequestableReferenceServer | undefined;
beforeEach(() => {
  pollWaits.requestedMs = [];
  pollWaits.skippedMs = 0;
  pollWaits.hold = undefined;
  vi.spyOn(Date, "now").mockImplementation(() => realNow() + pollWaits.skippedMs);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
});

function start(options: InProcessOptions = {}) {
  server = createRequestableReferenceServer({
    rateLimit: false,
    oauthRateLimit: false,
    oauthNow: () => Date.now(),
    deviceAuthorization: { intervalSeconds: 1 },
    ...options,
  });
  return server;
}

/** The reference server's handler, as the session's (and a wrapper's) network. */
const serverFetch = (input: string | URL | Request, init?: RequestInit) => server!.fetch(input, init);

/** Everything the sign-in writes to stderr, kept (and not shown); `written` settles on the write that completes a match. */
function captureStderr() {
  let written = "";
  const watchers = new Set<() => void>();
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    written += String(chunk);
    for (const watch of watchers) watch();
    return true;
  });
  const text = () => written;
  text.written = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve) => {
      const watch = () => {
        const match = pattern.exec(written);
        if (!match) return;
        watchers.delete(watch);
        resolve(match);
      };
      watchers.add(watch);
      watch();
    });
  return text;
}

/** A session that signs in with a device code on the server's handler; the skipped polls pass the clock quickly while a person decides, and the default wait (300 s) leaves them time. */
function deviceSession(extra: Partial<OAuthSessionOptions> = {}) {
  return referenceSession({ mcpUrl: server!.mcpUrl, fetch: serverFetch as typeof fetch }, extra);
}

/**
 * Resolves with the URL and code the sign-in printed, once it has printed them; rejects, with what it printed, when
 * `signingIn` ends first.
 */
async function shownCode(
  stderr: ReturnType<typeof captureStderr>,
  signingIn: Promise<unknown>,
): Promise<{ url: string; code: string }> {
  const ended = signingIn.then(
    () => Promise.reject(new Error(`the sign-in ended with no device code shown: ${stderr()}`)),
    (error: unknown) => Promise.reject(new Error(`the sign-in failed with no device code shown: ${error}`)),
  );
  const match = await Promise.race([
    stderr.written(/open this URL in a browser on any device:\n {2}(\S+)\n.* ([A-Z]{4}-[A-Z]{4})\n/),
    ended,
  ]);
  return { url: match[1] as string, code: match[2] as string };
}

/** A person signed in as dev opens the URL, continues with the code and decides on the consent page. */
async function decide(url: string, decision: "approve" | "deny", account = "acme") {
  const browser = new TestBrowser(server!.url, serverFetch as typeof fetch);
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
    start();
    const stderr = captureStderr();
    const { session, stored } = deviceSession();
    // One poll goes before the person decides (authorization_pending), the next waits for them.
    const polls = holdPolls(1);
    const signingIn = session.signIn();
    const { url, code } = await shownCode(stderr, signingIn);
    expect(url).toBe(`${server!.url}/device?user_code=${code}`);
    expect(stderr()).toContain(`and check that it shows the code ${code}`);
    // The sign-in ending first (an error, or tokens with no decision) fails here, with its reason.
    await Promise.race([
      polls.held,
      signingIn.then(() => Promise.reject(new Error("the sign-in ended before the person decided"))),
    ]);
    await decide(url, "approve", "acme");
    polls.decided();
    const summary = await signingIn;
    expect(pollWaits.requestedMs).toEqual([1_000, 1_000]);
    expect(summary.storedIn).toBe("file");
    const login = stored();
    expect(login.tokens?.account).toBe("acme");
    expect(login.client?.grant_types).toContain(DEVICE_GRANT);
    expect(login.client?.redirect_uris).toEqual([]);
    const tools = await server!.fetch(server!.mcpUrl, {
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
    start({ autoApprove: "personal" });
    captureStderr();
    const { session, stored } = deviceSession();
    await session.signIn();
    const first = stored().client?.client_id;
    await session.signIn();
    expect(stored().client?.client_id).toBe(first);
  }, 30_000);

  it("deny: ends at once with access_denied, and no token is stored", async () => {
    start();
    const stderr = captureStderr();
    const { session, stored } = deviceSession();
    const polls = holdPolls();
    const signingIn = session.signIn().catch((error: unknown) => error);
    await decide((await shownCode(stderr, signingIn)).url, "deny");
    polls.decided();
    const error = await signingIn;
    expect(error).toBeInstanceOf(AuthRequiredError);
    expect((error as AuthRequiredError).reason).toBe("denied");
    expect((error as Error).message).toMatch(/denied in the browser \(access_denied\)/);
    expect(stored().tokens).toBeUndefined();
  }, 30_000);

  it("expired_token ends it with the reason, before --auth-timeout", async () => {
    start({ deviceAuthorization: { intervalSeconds: 1, lifetimeSeconds: 2 } });
    captureStderr();
    // The client is told the code lives long, so only the server's expired_token can end the wait early.
    const longerLife = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await serverFetch(input, init);
      const url = input instanceof Request ? input.url : String(input);
      if (!url.endsWith("/device_authorization")) return response;
      return Response.json({ ...((await response.json()) as object), expires_in: 600 });
    };
    const { session } = deviceSession({ authTimeoutMs: 60_000, fetch: longerLife as typeof fetch });
    const error = await session.signIn().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/expired before it was approved \(expired_token\)/);
    // Counted in the polls' waits, not the wall clock: a loaded machine cannot make this pass or fail.
    expect(pollWaits.skippedMs).toBeLessThan(10_000);
  }, 30_000);

  it("--auth-timeout bounds the whole wait", async () => {
    start({ deviceAuthorization: { intervalSeconds: 1 } });
    captureStderr();
    const { session } = deviceSession({ authTimeoutMs: 2_500 });
    const error = await session.signIn().catch((e: unknown) => e);
    expect((error as AuthRequiredError).reason).toBe("timeout");
    expect((error as Error).message).toMatch(/not approved within 3 s/);
  }, 30_000);

  it("the bridge's relay is answered at once with the URL and the code, and the sign-in goes on", async () => {
    start();
    const stderr = captureStderr();
    const { session } = deviceSession({ answerAtOnceWhenWaiting: true });
    const polls = holdPolls();
    const waiting = await session.recover({ status: 401, wwwAuthenticate: null }).catch((e: unknown) => e);
    expect(waiting).toBeInstanceOf(SignInWaitingError);
    const signingIn = session.signInSettled();
    expect(signingIn).toBeDefined();
    const { url, code } = await shownCode(stderr, signingIn!);
    expect((waiting as SignInWaitingError).why).toBe("device-code");
    expect((waiting as SignInWaitingError).signInUrl).toBe(url);
    expect((waiting as Error).message).toContain(url);
    expect((waiting as Error).message).toContain(code);
    await decide(url, "approve");
    polls.decided();
    const token = await signingIn;
    expect(token).toMatch(/^chat_at_/);
    expect(await session.accessToken()).toBe(token);
  }, 30_000);
});

describe("--device-code over plain http that --allow-http allowed (not loopback)", () => {
  it("polls the http token endpoint the metadata names, as the other grants do", async () => {
    // The SDK alone refuses a plain http token endpoint on a host other than loopback.
    start({ autoApprove: "acme", url: "http://chat.example.test" });
    captureStderr();
    const polled: string[] = [];
    const recording = async (input: string | URL | Request, init?: RequestInit) => {
      const url = new Request(input, init).url;
      if (url.endsWith("/token")) polled.push(url);
      return serverFetch(input, init);
    };
    const { session } = deviceSession({ allowHttp: true, fetch: recording as typeof fetch });
    await session.signIn();
    expect(await session.accessToken()).toMatch(/^chat_at_/);
    expect(polled.length).toBeGreaterThan(0);
    expect(polled.every((url) => url.startsWith("http://chat.example.test/"))).toBe(true);
  }, 30_000);
});

describe("polling as RFC 8628 says", () => {
  it("slow_down adds 5 s to the interval", async () => {
    start({ autoApprove: "acme" });
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
      return serverFetch(input, init);
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
    start({ autoApprove: "acme" });
    const stderr = captureStderr();
    const hostile = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await serverFetch(input, init);
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
    start({ autoApprove: "acme" });
    const stderr = captureStderr();
    const upperCase = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await serverFetch(input, init);
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
      start({ autoApprove: "acme" });
      const stderr = captureStderr();
      const hostile = async (input: string | URL | Request, init?: RequestInit) => {
        const response = await serverFetch(input, init);
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
    start();
    captureStderr();
    const noDevice = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await serverFetch(input, init);
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
});
