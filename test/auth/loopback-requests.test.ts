/** What the loopback callback answers (src/auth/loopback-callback.ts): the start page and its cookie, states, denials, RFC 9207 iss. */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AuthRequiredError } from "../../src/auth/errors.js";
import {
  answerRequest,
  type CallbackState,
  type Flow,
  type LoopbackCallback,
  startLoopbackCallback,
} from "../../src/auth/loopback-callback.js";
import { isOtherUsersSocket } from "../../src/auth/socket-owner.js";
import { answerCallback, beginSignIn } from "./fixtures/loopback.js";

let callback: LoopbackCallback | undefined;
afterEach(async () => {
  await callback?.close();
  callback = undefined;
});

describe("callback with the wrong or missing state is rejected and the flow keeps waiting", () => {
  it("answers 400 to a wrong state, then completes with the right one", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginSignIn(callback!, "right-state");
    const wrong = await answerCallback(callback!, { state: "wrong-state", code: "attacker-code" }, cookie);
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get("cache-control")).toBe("no-store");
    expect((await answerCallback(callback!, { code: "no-state" }, cookie)).status).toBe(400);
    const right = await answerCallback(callback!, { state: "right-state", code: "the-code" }, cookie);
    expect(right.status).toBe(200);
    expect(right.headers.get("cache-control")).toBe("no-store");
    expect(right.headers.get("content-type")).toMatch(/^text\/html/);
    await expect(result).resolves.toEqual({ state: "right-state", code: "the-code" });
  });

  it("accepts a state only once (a replay gets 400)", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginSignIn(callback!, "s1");
    expect((await answerCallback(callback!, { state: "s1", code: "c1" }, cookie)).status).toBe(200);
    await result;
    expect((await answerCallback(callback!, { state: "s1", code: "c2" }, cookie)).status).toBe(400);
  });
});

describe("callback with error=access_denied", () => {
  it("ends the flow with AuthRequiredError (denied) and a plain page", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginSignIn(callback!, "s2");
    const page = await answerCallback(callback!, { state: "s2", error: "access_denied" }, cookie);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/cancelled/i);
    await expect(result).rejects.toMatchObject({ name: "AuthRequiredError", reason: "denied" });
  });
});

describe("the start page: the sign-in belongs to the browser that opened it first", () => {
  it("redirects once to the authorization URL with an HttpOnly cookie and no referrer", async () => {
    callback = await startLoopbackCallback();
    const { started, cookie } = await beginSignIn(callback!, "s4");
    expect(started.status).toBe(302);
    expect(started.headers.get("location")).toBe("https://as.example/authorize?state=s4");
    expect(started.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Lax/);
    expect(started.headers.get("referrer-policy")).toBe("no-referrer");
    expect(started.headers.get("cache-control")).toBe("no-store");
    expect(cookie).toMatch(new RegExp(`^chat_mcp_sign_in_${callback.port}=`));
  });

  it("refuses an answer with another browser's cookie, and keeps waiting for the real one", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginSignIn(callback!, "s5");
    const forged = `${cookie.split("=")[0]}=${"A".repeat(43)}`;
    expect((await answerCallback(callback!, { state: "s5", code: "attacker-code" }, forged)).status).toBe(
      403,
    );
    expect((await answerCallback(callback!, { state: "s5", code: "the-code" }, cookie)).status).toBe(200);
    await expect(result).resolves.toEqual({ state: "s5", code: "the-code" });
  });

  it("refuses an answer for a start page nobody opened, and keeps waiting", async () => {
    callback = await startLoopbackCallback();
    const pending = callback.begin("https://as.example/authorize?state=s7", "s7", 10_000);
    pending.answer.catch(() => {});
    expect((await answerCallback(callback!, { state: "s7", code: "attacker-code" })).status).toBe(403);
    const started = await fetch(pending.startUrl, { redirect: "manual" });
    const cookie = started.headers.get("set-cookie")?.split(";")[0] ?? "";
    expect((await answerCallback(callback!, { state: "s7", code: "the-code" }, cookie)).status).toBe(200);
    await expect(pending.answer).resolves.toEqual({ state: "s7", code: "the-code" });
  });

  it("a start page opened twice stops the sign-in: whoever opened it first cannot finish it", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, startUrl, cookie } = await beginSignIn(callback!, "s6");
    const second = await fetch(startUrl, { redirect: "manual" });
    expect(second.status).toBe(409);
    expect(second.headers.get("location")).toBeNull();
    await expect(result).rejects.toMatchObject({ name: "AuthRequiredError", reason: "refused" });
    expect((await answerCallback(callback!, { state: "s6", code: "c" }, cookie)).status).toBe(400);
  });
});

describe("RFC 9207: the answer's iss, checked before its code or error is looked at", () => {
  async function beginChecked(state: string, issuer: string, advertised: boolean) {
    return beginSignIn(callback!, state, 10_000, {
      acceptsIssuer: (iss) => (iss === undefined ? !advertised : iss === issuer),
    });
  }

  it("passes a matching iss on with the code", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginChecked("i1", "https://as.example", true);
    expect(
      (await answerCallback(callback!, { state: "i1", code: "c", iss: "https://as.example" }, cookie)).status,
    ).toBe(200);
    await expect(result).resolves.toEqual({ state: "i1", code: "c", iss: "https://as.example" });
  });

  it("refuses another issuer, showing none of the answer's error text", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginChecked("i2", "https://as.example", false);
    const page = await answerCallback(
      callback!,
      { state: "i2", iss: "https://as.example/", error: "invalid_request", error_description: "evil-text" },
      cookie,
    );
    expect(page.status).toBe(400);
    expect(await page.text()).not.toContain("evil-text");
    const error = (await result.catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ name: "AuthRequiredError", reason: "refused" });
    expect(error.message).toMatch(/RFC 9207/);
    expect(error.message).not.toMatch(/evil-text|invalid_request/);
  });

  it("refuses an answer without iss when the server advertised it", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginChecked("i3", "https://as.example", true);
    expect((await answerCallback(callback!, { state: "i3", code: "c" }, cookie)).status).toBe(400);
    await expect(result).rejects.toMatchObject({ reason: "refused" });
  });
});

describe("this sign-in's own answer, refused: the wait ends at once with why", () => {
  const refusedBy = (why: string) => new AuthRequiredError(`refused: ${why}`, "refused");

  it("an answer without any cookie (an opener that drops cookies) ends it with the hook's reason", async () => {
    callback = await startLoopbackCallback();
    const { answer: result } = await beginSignIn(callback!, "k1", 10_000, { refusedAnswer: refusedBy });
    const page = await answerCallback(callback!, { state: "k1", code: "c" });
    expect(page.status).toBe(403);
    expect(await page.text()).toMatch(/keeps cookies/);
    await expect(result).rejects.toThrow("refused: cookie-refused");
  });

  it("a denial without the cookie ends it as a denial", async () => {
    callback = await startLoopbackCallback();
    const { answer: result } = await beginSignIn(callback!, "k2", 10_000, { refusedAnswer: refusedBy });
    expect((await answerCallback(callback!, { state: "k2", error: "access_denied" })).status).toBe(200);
    await expect(result).rejects.toMatchObject({ name: "AuthRequiredError", reason: "denied" });
  });

  it("a stray answer with another state never ends it, with or without this browser's cookie", async () => {
    callback = await startLoopbackCallback();
    const { answer: result, cookie } = await beginSignIn(callback!, "k3", 10_000, {
      refusedAnswer: refusedBy,
    });
    const strays: Array<Record<string, string>> = [
      { state: "other", error: "access_denied" },
      { state: "other", code: "c" },
      { error: "access_denied" },
    ];
    for (const query of strays) {
      expect((await answerCallback(callback!, query)).status).toBe(400);
      // A web page the person visits can send their browser (and its cookie) to the callback with a made-up state.
      expect((await answerCallback(callback!, query, cookie)).status).toBe(400);
    }
    expect((await answerCallback(callback!, { state: "k3", code: "the-code" }, cookie)).status).toBe(200);
    await expect(result).resolves.toEqual({ state: "k3", code: "the-code" });
  });
});

describe("an opener that is no browser (curl, wget): it fetches the start page and stops there", () => {
  const startAs = (pending: { startUrl: string }, userAgent: string) =>
    fetch(pending.startUrl, { redirect: "manual", headers: { "user-agent": userAgent } });

  it("ends the sign-in once it has exited, naming what it said it was", async () => {
    callback = await startLoopbackCallback();
    const pending = callback.begin("https://as.example/authorize?state=n1", "n1", 10_000, {
      refusedAnswer: (why, opener) => new AuthRequiredError(`${why} by ${opener}`, "refused"),
    });
    pending.answer.catch(() => {});
    expect((await startAs(pending, "curl/7.88.1")).status).toBe(302);
    pending.openerExited();
    await expect(pending.answer).rejects.toThrow("not-a-browser by curl/7.88.1");
  });

  it("a browser's start (its opener exits at once, the person still signing in) keeps waiting", async () => {
    callback = await startLoopbackCallback();
    const pending = callback.begin("https://as.example/authorize?state=n2", "n2", 10_000);
    pending.answer.catch(() => {});
    const started = await startAs(pending, "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0");
    pending.openerExited();
    const cookie = started.headers.get("set-cookie")?.split(";")[0] ?? "";
    expect((await answerCallback(callback!, { state: "n2", code: "the-code" }, cookie)).status).toBe(200);
    await expect(pending.answer).resolves.toEqual({ state: "n2", code: "the-code" });
  });

  it("an opener that exits before any start page was fetched (xdg-open) keeps it waiting", async () => {
    callback = await startLoopbackCallback();
    const pending = callback.begin("https://as.example/authorize?state=n3", "n3", 10_000);
    pending.answer.catch(() => {});
    pending.openerExited();
    const started = await startAs(pending, "curl/8.0");
    const cookie = started.headers.get("set-cookie")?.split(";")[0] ?? "";
    expect((await answerCallback(callback!, { state: "n3", code: "the-code" }, cookie)).status).toBe(200);
    await expect(pending.answer).resolves.toEqual({ state: "n3", code: "the-code" });
  });
});

describe("the start page is spent only by a connection still there to receive it", () => {
  /** A callback server answering with `answerRequest` alone (no check when a connection is accepted). */
  async function bareStartPage(
    refusesPeer: CallbackState["refusesPeer"],
    around: (request: IncomingMessage, response: ServerResponse, answer: () => void) => void = (
      _request,
      _response,
      answer,
    ) => answer(),
  ) {
    const flow: Flow = {
      state: "b1",
      authorizationUrl: "https://as.example/authorize?state=b1",
      hooks: {},
      resolve: () => {},
      reject: () => {},
    };
    const state: CallbackState = {
      flows: new Map([["b1", flow]]),
      starts: new Map([["one-time", flow]]),
      cookieName: "chat_mcp_sign_in_test",
      callbackPath: "/callback",
      refusesPeer,
    };
    const server = createServer((request, response) =>
      around(request, response, () => answerRequest(request, response, state)),
    );
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const port = (server.address() as AddressInfo).port;
    return {
      port,
      flow,
      open: () => fetch(`http://127.0.0.1:${port}/start/one-time`, { redirect: "manual" }),
      close: () => new Promise<void>((done) => server.close(() => done())),
    };
  }

  it.skipIf(!existsSync("/proc/net/tcp"))(
    "a request whose sender hung up before it was read (Linux: its socket is no longer ESTABLISHED)",
    async () => {
      const bare = await bareStartPage(isOtherUsersSocket);
      try {
        // Synchronous on purpose: the request is read only after its sender has closed its socket and exited.
        const sender = spawnSync(
          process.execPath,
          [
            "-e",
            `const s = require("node:net").connect(${bare.port}, "127.0.0.1", () =>
               s.end("GET /start/one-time HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n", () => s.destroy()));`,
          ],
          { encoding: "utf8", timeout: 10_000 },
        );
        expect(sender.status, sender.stderr).toBe(0);
        // A request answered after the sender's: by then the sender's one has been handled.
        expect((await fetch(`http://127.0.0.1:${bare.port}/`)).status).toBe(404);
        expect(bare.flow.browserNonce).toBeUndefined();
        const started = await bare.open();
        expect(started.status).toBe(302);
        expect(started.headers.get("set-cookie")).toContain(bare.flow.browserNonce);
      } finally {
        await bare.close();
      }
    },
  );

  it("a connection whose answer could not be written (no socket tables to ask, as on macOS)", async () => {
    let resetFirst = true;
    const bare = await bareStartPage(
      () => false,
      (request, _response, answer) => {
        if (resetFirst) {
          resetFirst = false;
          const socket = request.socket;
          // The peer reset the connection: the write of the answer fails and nothing reaches it.
          socket.write = (() => {
            setImmediate(() => socket.destroy(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })));
            return false;
          }) as typeof socket.write;
        }
        answer();
      },
    );
    try {
      await expect(bare.open()).rejects.toThrow();
      expect(bare.flow.browserNonce).toBeUndefined();
      expect((await bare.open()).status).toBe(302);
    } finally {
      await bare.close();
    }
  });

  it("a connection already closed when its request is answered", async () => {
    let hangUpFirst = true;
    const bare = await bareStartPage(
      () => false,
      (request, _response, answer) => {
        if (hangUpFirst) request.socket.destroy();
        hangUpFirst = false;
        answer();
      },
    );
    try {
      await expect(bare.open()).rejects.toThrow();
      expect(bare.flow.browserNonce).toBeUndefined();
      expect((await bare.open()).status).toBe(302);
    } finally {
      await bare.close();
    }
  });
});
