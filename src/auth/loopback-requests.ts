/** What the loopback callback answers: a one-time start page binding the sign-in to one browser (a cookie), and that browser's answer. */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { rememberSecret } from "../internal/redact.js";
import { AuthRequiredError } from "./errors.js";

export const CALLBACK_PATH = "/callback";
export const START_PATH = "/start/";

/** Why `path` cannot be the callback's path (`--callback-path`), or undefined when it can. */
export function callbackPathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) return 'the callback path must start with "/", e.g. /oauth/callback';
  if (/[?#]/.test(path)) return "the callback path is a path only, without a query or fragment";
  if (!/^[A-Za-z0-9\-._~/%!$&'()*+,;=:@]{1,200}$/.test(path))
    return "the callback path has characters a URL path does not allow (or is over 200 long)";
  // A path the URL parser rewrites (dot segments, `%2e%2e`) never matches a request's, and may climb elsewhere:
  // `/a/../start/x` is the start page. Only a plain path, already in its normal form, is taken.
  const normalised = new URL(path, "http://127.0.0.1").pathname;
  if (normalised !== path || path.includes("//") || /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path)) {
    return `the callback path must be a plain path, without "." or ".." segments or empty ones (it reads as ${normalised})`;
  }
  if (path.startsWith(START_PATH) || `${path}/` === START_PATH)
    return `the callback path cannot be under ${START_PATH}: the sign-in's start page lives there`;
  return undefined;
}

/**
 * Why `url` cannot be where the browser goes after a successful sign-in (`--auth-success-url`): an http(s) URL
 * without credentials, plain http only to loopback unless `allowHttp`.
 */
export function successUrlProblem(url: string, allowHttp = false): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "the success page must be a URL, e.g. https://example.com/signed-in";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    return `the success page must be an http(s) URL, not ${parsed.protocol}`;
  if (parsed.username || parsed.password) return "the success page URL must not contain credentials";
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(parsed.hostname);
  if (parsed.protocol === "http:" && !loopback && !allowHttp)
    return "the success page must be https (plain http only to loopback, or with --allow-http)";
  return undefined;
}

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

/** The error a flow ends with when its own answer is refused. */
export function refused(flow: Flow, why: RefusedAnswer): Error {
  if (flow.hooks.refusedAnswer) return flow.hooks.refusedAnswer(why, flow.openedBy);
  return new AuthRequiredError(
    why === "cookie-refused"
      ? "Sign-in refused: the browser did not keep the sign-in page's cookie; sign in with a browser that keeps cookies."
      : `Sign-in refused: the sign-in page was opened by ${flow.openedBy ?? "a program"}, not a browser; sign in with a browser.`,
    "refused",
  );
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
