/** The RFC 8252 loopback redirect target: an HTTP server on 127.0.0.1 that takes one browser's answer for an expected `state`, through a one-time start page binding the sign-in to that browser (a cookie). */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { withinDeadline } from "../internal/deadline.js";
import { rememberSecret } from "../internal/redact.js";
import { AuthRequiredError } from "./errors.js";
import { CALLBACK_PATH, START_PATH } from "./session/provider-options.js";
import { refusedAnswerMessage } from "./sign-in-prompt.js";
import { isOtherUsersSocket, listenerUid } from "./socket-owner.js";

/** A sign-in waiting for its browser: the URL to open, and the answer that browser brings back. */
export interface PendingBrowserSignIn {
  /** `http://127.0.0.1:<port>/start/<one-time id>`: the authorization URL (and its `state`) stays out of argv and stderr. */
  readonly startUrl: string;
  /** Resolves with the code; rejects on a denial, after `timeoutMs`, or when the start page is opened twice. */
  readonly answer: Promise<AuthorizationResponse>;
  /**
   * The program that opened `startUrl` has exited: when it fetched the start page itself without a browser's name
   * (a `curl` as `$BROWSER`), no answer will come and the sign-in ends now; a browser's opener changes nothing.
   */
  openerExited(): void;
}

export interface LoopbackCallback {
  /** `http://<host>:<port>/callback`, or the loopback name of `--host` and the path of `--callback-path`. */
  readonly redirectUri: string;
  readonly port: number;
  /** Waits for the answer to `authorizationUrl` (which carries `state`); other states get a 400 page. */
  begin(
    authorizationUrl: string,
    state: string,
    timeoutMs: number,
    hooks?: AnswerHooks,
  ): PendingBrowserSignIn;
  close(): Promise<void>;
}

/** Where the callback listens: the port, and whether the user chose it (`--callback-port`) or it was derived. */
export interface CallbackPortChoice {
  port?: number | undefined;
  /** True for `--callback-port`: a busy port is an error, never silently replaced (an SSH tunnel points at it). */
  explicit?: boolean | undefined;
}

/** Where the browser's answer goes and where the person lands after it (`--callback-path`, `--auth-success-url`). */
export interface CallbackPages {
  callbackPath?: string | undefined;
  successUrl?: string | undefined;
}

/**
 * Listens on `host`:`port` (127.0.0.1 by default, `--host`). `localhost` listens on 127.0.0.1 and on ::1 with one
 * port, since the browser may resolve the name to either: when another program holds that port on either family,
 * a derived port is given up for another free on both, and an explicit one is an error. Nobody else may hold an
 * address the browser could send the answer to.
 */
export async function startLoopbackCallback(
  choice: CallbackPortChoice = {},
  host: string = "127.0.0.1",
  pages: CallbackPages = {},
): Promise<LoopbackCallback> {
  const callbackPath = pages.callbackPath ?? CALLBACK_PATH;
  const flows = new Map<string, Flow>();
  const starts = new Map<string, Flow>();
  let cookieName = "";
  const newServer = () => {
    const server = createServer((request, response) =>
      answerRequest(request, response, {
        flows,
        starts,
        cookieName,
        callbackPath,
        successUrl: pages.successUrl,
        refusesPeer: isOtherUsersSocket,
      }),
    );
    // A second lock where the kernel tells: connections from another user's socket (or one the kernel's socket
    // tables do not show) are closed unanswered.
    server.on("connection", (socket) => {
      if (isOtherUsersSocket(socket)) socket.destroy();
    });
    return server;
  };
  const addresses = host === "localhost" ? ["127.0.0.1", "::1"] : [host === "[::1]" ? "::1" : "127.0.0.1"];
  const { servers, port } = await listenOnEvery(addresses, choice, newServer);
  // Cookies ignore ports: one name per callback port keeps concurrent sign-ins apart.
  cookieName = `chat_mcp_sign_in_${port}`;
  const close = () => {
    // A sign-in given up before its answer (the device code took over) must not keep its deadline running.
    for (const flow of flows.values())
      flow.reject(new AuthRequiredError("The browser sign-in was abandoned.", "failed"));
    return Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    ).then(() => undefined);
  };
  return {
    redirectUri: `http://${host}:${port}${callbackPath}`,
    port,
    begin(authorizationUrl, state, timeoutMs, hooks = {}) {
      const startId = randomBytes(32).toString("base64url");
      let flow!: Flow;
      const answered = new Promise<AuthorizationResponse>((resolve, reject) => {
        flow = { state, authorizationUrl, hooks, resolve, reject };
      });
      flows.set(state, flow);
      starts.set(startId, flow);
      let settled = false;
      const answer = withinDeadline(
        answered,
        timeoutMs,
        hooks.timedOut ??
          (() =>
            new AuthRequiredError(
              `Sign-in timed out after ${Math.round(timeoutMs / 1000)} s without an answer from the browser; ` +
                "sign in again (raise --auth-timeout if you need more time).",
              "timeout",
            )),
      ).finally(() => {
        // Answered, refused or timed out: neither the start page nor the callback knows this sign-in any more.
        settled = true;
        flows.delete(state);
        starts.delete(startId);
      });
      return {
        startUrl: `http://${host}:${port}${START_PATH}${startId}`,
        answer,
        openerExited() {
          if (!settled && flow.openedBy !== undefined) flow.reject(refused(flow, "not-a-browser"));
        },
      };
    },
    close,
  };
}

const PORT_ATTEMPTS = 5;

/** Every address on one port, or an error; a derived port that is busy anywhere gives way to an ephemeral one. */
async function listenOnEvery(
  addresses: string[],
  choice: CallbackPortChoice,
  newServer: () => Server,
): Promise<{ servers: Server[]; port: number }> {
  let wanted = choice.port ?? 0;
  for (let attempt = 0; ; attempt++) {
    const servers: Server[] = [];
    let port = wanted;
    let busy: string | undefined;
    for (const address of addresses) {
      const server = newServer();
      try {
        port = await listen(server, address, port);
        servers.push(server);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // No IPv6 loopback on this machine: nobody can hold ::1 either, and the browser falls back to 127.0.0.1.
        if (
          address === "::1" &&
          addresses.length > 1 &&
          (code === "EADDRNOTAVAIL" || code === "EAFNOSUPPORT")
        )
          continue;
        if (code !== "EADDRINUSE" && code !== "EACCES") throw error;
        busy = address;
        break;
      }
    }
    if (busy === undefined) return { servers, port };
    await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
    if (choice.explicit || attempt + 1 >= PORT_ATTEMPTS)
      throw busyPortError(busy, port, choice.explicit === true);
    wanted = 0;
  }
}

/** Names the port and, where the kernel tells, whose program holds it. */
function busyPortError(address: string, port: number, explicit: boolean): AuthRequiredError {
  const uid = listenerUid(address, port);
  const holder =
    uid === undefined
      ? "another program holds it"
      : uid === process.getuid?.()
        ? "another program of yours holds it"
        : `a program of another user (uid ${uid}) holds it`;
  const where = address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
  const fix = explicit
    ? "stop that program or pass another --callback-port (and point any SSH tunnel at it)"
    : "stop that program, or pass --callback-port with a free port";
  return new AuthRequiredError(
    `Cannot receive the sign-in answer on port ${port}: ${where} is in use (${holder}); ${fix}.`,
    "failed",
  );
}

async function listen(server: Server, address: string, port: number): Promise<number> {
  server.listen(port, address);
  await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

// What the callback answers: the one-time start page and its cookie, and that browser's answer.

/** What the authorization server sent back for one expected `state`. */
export interface AuthorizationResponse {
  state: string;
  code: string;
  /** RFC 9207 `iss` of the answer, when it carried one (already accepted by `acceptsIssuer`). */
  iss?: string;
}

/** What the sign-in decides or hears about an answer while it waits. */
export interface AnswerHooks {
  /** RFC 9207: an answer whose `iss` this refuses ends the sign-in before its code or error is looked at. */
  acceptsIssuer?: (iss: string | undefined) => boolean;
  /**
   * The error this sign-in ends with when its own answer is refused: the answer (with this sign-in's `state`) came
   * back without the start page's cookie at all (a `$BROWSER` that drops cookies, cookies blocked), or the opener
   * fetched the start page and exited without a browser's name (`opener`: the name it gave, e.g. `curl/8.5.0`).
   */
  refusedAnswer?: (why: RefusedAnswer, opener?: string) => Error;
  /** The error this sign-in ends with when no answer came in time; by default one naming `--auth-timeout`. */
  timedOut?: () => Error;
}

/** Why a sign-in's own answer was refused (see `AnswerHooks.refusedAnswer`). */
export type RefusedAnswer = "cookie-refused" | "not-a-browser";

export interface Flow {
  state: string;
  authorizationUrl: string;
  hooks: AnswerHooks;
  /** Set when the start page was opened: the value of the cookie the callback must carry. */
  browserNonce?: string;
  /** Set when the start page was opened by a client without a browser's name: the name it gave. */
  openedBy?: string;
  resolve(response: AuthorizationResponse): void;
  reject(error: Error): void;
}

export interface CallbackState {
  flows: Map<string, Flow>;
  starts: Map<string, Flow>;
  cookieName: string;
  /** The redirect URI's path: `/callback` unless `--callback-path` chose another. */
  callbackPath: string;
  /** `--auth-success-url`: where the browser is sent after a successful answer, instead of our page. */
  successUrl?: string | undefined;
  /**
   * True when the connection's peer is not a live socket of this user (Linux: `isOtherUsersSocket`). Asked again
   * when the start page is about to be spent, since a peer may have sent its request and hung up since it connected.
   */
  refusesPeer(socket: Socket): boolean;
}

export function answerRequest(
  request: IncomingMessage,
  response: ServerResponse,
  callback: CallbackState,
): void {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  if (request.method === "GET" && url.pathname.startsWith(START_PATH)) {
    start(url.pathname.slice(START_PATH.length), request, response, callback);
    return;
  }
  if (request.method !== "GET" || url.pathname !== callback.callbackPath) {
    page(response, 404, "Not found", "This address only receives sign-in answers.");
    return;
  }
  const state = url.searchParams.get("state") ?? "";
  const flow = callback.flows.get(state);
  if (!flow) {
    // A stale tab, a replay or a forged request: refuse it and keep waiting for the real answer.
    page(
      response,
      400,
      "Sign-in link not recognised",
      "This answer does not belong to the sign-in in progress.",
    );
    return;
  }
  const presented = cookieValue(request, callback.cookieName);
  // Only an answer carrying this sign-in's state can end it: a stray request (another local user, a web page that
  // sends the person's browser here with a made-up state) gets a page and changes nothing.
  if (!flow.browserNonce || (presented !== undefined && !sameSecret(presented, flow.browserNonce))) {
    // Someone who read the authorization URL (or `state`) signed in elsewhere and calls back here: refuse it.
    page(
      response,
      403,
      "Sign-in started in another browser",
      "This answer did not come from the browser that started the sign-in, so it is refused.",
    );
    return;
  }
  const iss = url.searchParams.get("iss") ?? undefined;
  if (flow.hooks.acceptsIssuer && !flow.hooks.acceptsIssuer(iss)) {
    // A mix-up: the answer names another authorization server. Nothing of it (code, error text) is used or shown.
    page(
      response,
      400,
      "Sign-in answer refused",
      "This answer came from another authorization server than the one the sign-in started with.",
    );
    flow.reject(
      new AuthRequiredError(
        "The sign-in answer came from another authorization server than the one asked (its iss did not " +
          "match, RFC 9207), so it was refused; sign in again, and tell the server's operator if it repeats.",
        "refused",
      ),
    );
    return;
  }
  const error = url.searchParams.get("error");
  const code = url.searchParams.get("code");
  if (!error && presented === undefined) {
    // The answer for this sign-in, through an opener that does not keep cookies: it cannot be told from someone
    // else's, and no later answer will be any different, so the sign-in ends now.
    page(
      response,
      403,
      "Sign-in answer without its cookie",
      "This browser did not keep the cookie the sign-in page set, so the answer is refused. Sign in with a " +
        "browser that keeps cookies.",
    );
    flow.reject(refused(flow, "cookie-refused"));
    return;
  }
  if (error) {
    const denied = error === "access_denied";
    page(
      response,
      200,
      denied ? "Sign-in cancelled" : "Sign-in failed",
      "You can close this tab and return to the terminal.",
    );
    flow.reject(
      new AuthRequiredError(
        denied
          ? "Sign-in was cancelled in the browser (access denied); sign in again to grant access."
          : `The authorization server refused the sign-in (${safeErrorCode(error)}); sign in again or check the server.`,
        denied ? "denied" : "refused",
      ),
    );
    return;
  }
  if (!code) {
    page(response, 400, "Sign-in answer incomplete", "The answer carried neither a code nor an error.");
    return;
  }
  rememberSecret(code);
  if (callback.successUrl) {
    // The code stays here: the page the person chose gets no query of ours, and no referrer.
    response.writeHead(302, { Location: callback.successUrl, ...SAFE_HEADERS, ...clearCookie(callback) });
    response.end();
  } else
    page(
      response,
      200,
      "Signed in",
      "You can close this tab and return to the terminal.",
      clearCookie(callback),
    );
  flow.resolve({ state, code, ...(iss !== undefined ? { iss } : {}) });
}

/** The error a flow ends with when its own answer is refused: by default, what a `login` command is told. */
function refused(flow: Flow, why: RefusedAnswer): Error {
  const { refusedAnswer } = flow.hooks;
  if (refusedAnswer) return refusedAnswer(why, flow.openedBy);
  return new AuthRequiredError(refusedAnswerMessage(why, flow.openedBy, true), "refused");
}

/**
 * The name a client that is no web browser gives itself (curl, wget and HTTP libraries name themselves), or
 * undefined for a browser: every browser's User-Agent starts with `Mozilla/`, a token they all kept.
 */
function programName(userAgent: string | undefined): string | undefined {
  if (userAgent?.startsWith("Mozilla/")) return undefined;
  // Shown to the user: its first word only, in plain characters.
  const product = /^[\w./+-]{1,40}/.exec(userAgent ?? "")?.[0];
  return product ?? "a program without a User-Agent";
}

/**
 * The one-time start page: binds the sign-in to this browser with a cookie, then sends it to the authorization URL.
 * It is spent only by a connection still there to receive the answer: one that sent the request and hung up (or
 * whose answer could not be written) leaves the page for the real browser.
 */
function start(
  startId: string,
  request: IncomingMessage,
  response: ServerResponse,
  callback: CallbackState,
): void {
  const flow = callback.starts.get(startId);
  if (!flow) {
    page(response, 404, "Sign-in link not recognised", "This sign-in link is unknown or has ended.");
    return;
  }
  const socket = request.socket;
  if (socket.destroyed || !socket.writable || callback.refusesPeer(socket)) {
    socket.destroy();
    return;
  }
  if (flow.browserNonce) {
    // Two browsers opened the link: one of them is not the user's. Neither may finish this sign-in.
    page(
      response,
      409,
      "Sign-in link opened twice",
      "This sign-in link was already opened, so the sign-in was stopped. Start it again from the terminal.",
    );
    flow.reject(
      new AuthRequiredError(
        "The sign-in link was opened twice (another program may have tried to take over the sign-in), so " +
          "the sign-in was stopped; sign in again.",
        "refused",
      ),
    );
    return;
  }
  const nonce = randomBytes(32).toString("base64url");
  flow.browserNonce = nonce;
  flow.openedBy = programName(request.headers["user-agent"]);
  let written = false;
  response.once("finish", () => {
    written = true;
  });
  response.once("close", () => {
    // Closed before the answer was handed to the socket: nobody holds this cookie, so the page may be opened again.
    if (!written && flow.browserNonce === nonce) delete flow.browserNonce;
  });
  response.writeHead(302, {
    Location: flow.authorizationUrl,
    "Set-Cookie": `${callback.cookieName}=${nonce}; Path=/; HttpOnly; SameSite=Lax`,
    ...SAFE_HEADERS,
  });
  response.end();
}

function clearCookie(callback: CallbackState): Record<string, string> {
  return { "Set-Cookie": `${callback.cookieName}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax` };
}

function cookieValue(request: IncomingMessage, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

function sameSecret(presented: string | undefined, expected: string): boolean {
  const a = Buffer.from(presented ?? "");
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

// The error code is echoed into a message; keep it to the RFC 6749 character set so nothing odd reaches a terminal.
function safeErrorCode(error: string): string {
  return /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(error) ? error : "unknown error";
}

const SAFE_HEADERS = {
  "Cache-Control": "no-store",
  "Content-Security-Policy": "default-src 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  Connection: "close",
};

function page(
  response: ServerResponse,
  status: number,
  title: string,
  text: string,
  extraHeaders: Record<string, string> = {},
): void {
  response.writeHead(status, {
    "Content-Type": "text/html; charset=utf-8",
    ...SAFE_HEADERS,
    ...extraHeaders,
  });
  response.end(
    `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
      `<body><h1>${title}</h1><p>${text}</p></body></html>\n`,
  );
}
