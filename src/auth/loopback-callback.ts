/**
 * The RFC 8252 loopback redirect target: an HTTP server on 127.0.0.1 that hands the browser a one-time start page
 * and accepts the answer only from that browser, for the `state` it was told to expect.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { rememberSecret } from "../internal/redact.js";
import { AuthRequiredError } from "./errors.js";
import { isOtherUsersSocket, listenerUid } from "./socket-owner.js";

export const CALLBACK_PATH = "/callback";
const START_PATH = "/start/";

/** What the authorization server sent back for one expected `state`. */
export interface AuthorizationResponse {
  state: string;
  code: string;
  /** RFC 9207 `iss` of the answer, when it carried one (already accepted by `acceptsIssuer`). */
  iss?: string;
}

/** A sign-in waiting for its browser: the URL to open, and the answer that browser brings back. */
export interface PendingAuthorization {
  /**
   * `http://127.0.0.1:<port>/start/<one-time id>`: redirects to the authorization URL and binds the sign-in to the
   * browser that opens it first. The authorization URL (and its `state`) never appears in argv or on stderr.
   */
  readonly startUrl: string;
  /** Resolves with the code; rejects on a denial, after `timeoutMs`, or when the start page is opened twice. */
  readonly answer: Promise<AuthorizationResponse>;
}

export interface LoopbackCallback {
  /** `http://<host>:<port>/callback`, the host being `127.0.0.1` unless `--host` chose another loopback name. */
  readonly redirectUri: string;
  readonly port: number;
  /** Waits for the answer to `authorizationUrl` (which carries `state`); other states get a 400 page. */
  begin(
    authorizationUrl: string,
    state: string,
    timeoutMs: number,
    hooks?: AnswerHooks,
  ): PendingAuthorization;
  close(): Promise<void>;
}

/** What the sign-in decides or hears about an answer while it waits. */
export interface AnswerHooks {
  /** RFC 9207: an answer whose `iss` this refuses ends the sign-in before its code or error is looked at. */
  acceptsIssuer?: (iss: string | undefined) => boolean;
  /**
   * The answer for this sign-in came back without the start page's cookie at all: the opener does not keep
   * cookies (a curl-like `$BROWSER`, cookies blocked). The answer is refused; the user should hear it at once.
   */
  onAnswerWithoutCookie?: () => void;
}

interface Flow {
  state: string;
  authorizationUrl: string;
  hooks: AnswerHooks;
  /** Set when the start page was opened: the value of the cookie the callback must carry. */
  browserNonce?: string;
  resolve(response: AuthorizationResponse): void;
  reject(error: Error): void;
}

/** Where the callback listens: the port, and whether the user chose it (`--callback-port`) or it was derived. */
export interface CallbackPortChoice {
  port?: number | undefined;
  /** True for `--callback-port`: a busy port is an error, never silently replaced (an SSH tunnel points at it). */
  explicit?: boolean | undefined;
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
): Promise<LoopbackCallback> {
  const flows = new Map<string, Flow>();
  const starts = new Map<string, Flow>();
  let cookieName = "";
  const newServer = () => {
    const server = createServer((request, response) =>
      answer(request, response, { flows, starts, cookieName }),
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
  const close = () =>
    Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    ).then(() => undefined);
  return {
    redirectUri: `http://${host}:${port}${CALLBACK_PATH}`,
    port,
    begin(authorizationUrl, state, timeoutMs, hooks = {}) {
      const startId = randomBytes(32).toString("base64url");
      const answer = new Promise<AuthorizationResponse>((resolve, reject) => {
        const end = () => {
          clearTimeout(timer);
          flows.delete(state);
          starts.delete(startId);
        };
        const timer = setTimeout(() => {
          end();
          reject(
            new AuthRequiredError(
              `Sign-in timed out after ${Math.round(timeoutMs / 1000)} s without an answer from the browser; ` +
                "sign in again (raise --auth-timeout if you need more time).",
              "timeout",
            ),
          );
        }, timeoutMs);
        const flow: Flow = {
          state,
          authorizationUrl,
          hooks,
          resolve: (value) => {
            end();
            resolve(value);
          },
          reject: (error) => {
            end();
            reject(error);
          },
        };
        flows.set(state, flow);
        starts.set(startId, flow);
      });
      return { startUrl: `http://${host}:${port}${START_PATH}${startId}`, answer };
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

function listen(server: Server, address: string, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off("listening", onListening);
      reject(error);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, address);
  });
}

interface CallbackState {
  flows: Map<string, Flow>;
  starts: Map<string, Flow>;
  cookieName: string;
}

function answer(request: IncomingMessage, response: ServerResponse, callback: CallbackState): void {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  if (request.method === "GET" && url.pathname.startsWith(START_PATH)) {
    start(url.pathname.slice(START_PATH.length), response, callback);
    return;
  }
  if (request.method !== "GET" || url.pathname !== CALLBACK_PATH) {
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
  if (flow.browserNonce && presented === undefined) {
    page(
      response,
      403,
      "Sign-in answer without its cookie",
      "This browser did not keep the cookie the sign-in page set, so the answer is refused. Sign in with a " +
        "browser that keeps cookies.",
    );
    flow.hooks.onAnswerWithoutCookie?.();
    return;
  }
  if (!flow.browserNonce || !sameSecret(presented, flow.browserNonce)) {
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
  page(
    response,
    200,
    "Signed in",
    "You can close this tab and return to the terminal.",
    clearCookie(callback),
  );
  flow.resolve({ state, code, ...(iss !== undefined ? { iss } : {}) });
}

/** The one-time start page: binds the sign-in to this browser with a cookie, then sends it to the authorization URL. */
function start(startId: string, response: ServerResponse, callback: CallbackState): void {
  const flow = callback.starts.get(startId);
  if (!flow) {
    page(response, 404, "Sign-in link not recognised", "This sign-in link is unknown or has ended.");
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
  flow.browserNonce = randomBytes(32).toString("base64url");
  response.writeHead(302, {
    Location: flow.authorizationUrl,
    "Set-Cookie": `${callback.cookieName}=${flow.browserNonce}; Path=/; HttpOnly; SameSite=Lax`,
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
