/** The RFC 8252 loopback redirect target: an HTTP server on 127.0.0.1 that takes one browser's answer for an expected `state`. */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { withinDeadline } from "../internal/deadline.js";
import { AuthRequiredError } from "./errors.js";
import {
  type AnswerHooks,
  type AuthorizationResponse,
  answerRequest,
  CALLBACK_PATH,
  type Flow,
  refused,
  START_PATH,
} from "./loopback-requests.js";
import { isOtherUsersSocket, listenerUid } from "./socket-owner.js";

export type { AnswerHooks, AuthorizationResponse, RefusedAnswer } from "./loopback-requests.js";
export { CALLBACK_PATH } from "./loopback-requests.js";

/** A sign-in waiting for its browser: the URL to open, and the answer that browser brings back. */
export interface PendingBrowserSignIn {
  /**
   * `http://127.0.0.1:<port>/start/<one-time id>`: redirects to the authorization URL and binds the sign-in to the
   * browser that opens it first. The authorization URL (and its `state`) never appears in argv or on stderr.
   */
  readonly startUrl: string;
  /** Resolves with the code; rejects on a denial, after `timeoutMs`, or when the start page is opened twice. */
  readonly answer: Promise<AuthorizationResponse>;
  /**
   * The program that opened `startUrl` has exited. When that program fetched the start page itself without a
   * browser's name (a `curl` as `$BROWSER`) and no answer came, none will: the sign-in ends now. A browser's
   * opener (xdg-open, open) exits as soon as it has handed the URL over, and changes nothing.
   */
  openerExited(): void;
}

export interface LoopbackCallback {
  /**
   * `http://<host>:<port>/callback`, the host being `127.0.0.1` unless `--host` chose another loopback name, the
   * path `/callback` unless `--callback-path` chose another.
   */
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
