/**
 * The RFC 8252 loopback redirect target: an HTTP server on 127.0.0.1 that hands the browser a one-time start page
 * and accepts the answer only from that browser, for the `state` it was told to expect.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { rememberSecret } from "../internal/redact.js";
import { AuthRequiredError } from "./errors.js";

export const CALLBACK_PATH = "/callback";
const START_PATH = "/start/";

/** What the authorization server sent back for one expected `state`. */
export interface AuthorizationResponse {
  state: string;
  code: string;
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
  begin(authorizationUrl: string, state: string, timeoutMs: number): PendingAuthorization;
  close(): Promise<void>;
}

interface Flow {
  state: string;
  authorizationUrl: string;
  /** Set when the start page was opened: the value of the cookie the callback must carry. */
  browserNonce?: string;
  resolve(response: AuthorizationResponse): void;
  reject(error: Error): void;
}

/**
 * Listens on `host`:`preferredPort` (127.0.0.1 by default, `--host`), or on an ephemeral port when that one is
 * taken. `localhost` listens on 127.0.0.1 and on ::1 (when the machine has IPv6), one port for both, since the
 * browser may resolve the name to either; the start page uses the same host name, so its cookie reaches the callback.
 */
export async function startLoopbackCallback(
  preferredPort?: number,
  host: string = "127.0.0.1",
): Promise<LoopbackCallback> {
  const flows = new Map<string, Flow>();
  const starts = new Map<string, Flow>();
  let cookieName = "";
  const newServer = () => {
    const server = createServer((request, response) =>
      answer(request, response, { flows, starts, cookieName }),
    );
    // A second lock where the kernel tells: connections from another user's socket are closed unanswered.
    server.on("connection", (socket) => {
      if (isOtherUsersSocket(socket)) socket.destroy();
    });
    return server;
  };
  const servers = [newServer()];
  const address = host === "[::1]" ? "::1" : "127.0.0.1";
  const port = await listen(servers[0]!, address, preferredPort).catch(() => listen(servers[0]!, address, 0));
  if (host === "localhost") {
    const ipv6 = newServer();
    // No IPv6 loopback here (or its port taken): the IPv4 one still serves every browser that resolves to it.
    const listening = await listen(ipv6, "::1", port).then(
      () => true,
      () => false,
    );
    if (listening) servers.push(ipv6);
  }
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
    begin(authorizationUrl, state, timeoutMs) {
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

function listen(server: ReturnType<typeof createServer>, address: string, port = 0): Promise<number> {
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
  if (!flow.browserNonce || !sameSecret(cookieValue(request, callback.cookieName), flow.browserNonce)) {
    // Someone who read the authorization URL (or `state`) signed in elsewhere and calls back here: refuse it.
    page(
      response,
      403,
      "Sign-in started in another browser",
      "This answer did not come from the browser that started the sign-in, so it is refused.",
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
  flow.resolve({ state, code });
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

/**
 * Linux: whether the peer of `socket` belongs to another user, from the socket table in /proc/net/tcp (the peer's
 * socket is the row whose local address is our remote one). False when that cannot be told (other systems).
 */
export function isOtherUsersSocket(socket: Socket, table = "/proc/net/tcp"): boolean {
  const ownUid = process.getuid?.();
  if (ownUid === undefined || socket.remotePort === undefined || socket.localPort === undefined) return false;
  const owner = socketOwnerUid(socket.remotePort, socket.localPort, table);
  return owner !== undefined && owner !== ownUid;
}

/** The uid owning the loopback TCP socket bound to `localPort` and connected to `remotePort`, if the table says. */
export function socketOwnerUid(
  localPort: number,
  remotePort: number,
  table = "/proc/net/tcp",
): number | undefined {
  let text: string;
  try {
    text = readFileSync(table, "utf8");
  } catch {
    return undefined;
  }
  const local = `:${localPort.toString(16).toUpperCase().padStart(4, "0")}`;
  const remote = `:${remotePort.toString(16).toUpperCase().padStart(4, "0")}`;
  for (const line of text.split("\n")) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
    const fields = line.trim().split(/\s+/);
    if (fields[1]?.endsWith(local) && fields[2]?.endsWith(remote)) {
      const uid = Number(fields[7]);
      return Number.isInteger(uid) ? uid : undefined;
    }
  }
  return undefined;
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
