/** The RFC 8252 loopback redirect target: an HTTP server on 127.0.0.1 that accepts only the `state` it was told to expect. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AuthRequiredError } from "./errors.js";

export const CALLBACK_PATH = "/callback";

/** What the authorization server sent back for one expected `state`. */
export interface AuthorizationResponse {
  state: string;
  code: string;
}

export interface LoopbackCallback {
  /** `http://127.0.0.1:<port>/callback`: the literal loopback address, never `localhost`. */
  readonly redirectUri: string;
  readonly port: number;
  /** Resolves with the code for `state`; rejects on a denial or after `timeoutMs`. Other states get a 400 page. */
  waitFor(state: string, timeoutMs: number): Promise<AuthorizationResponse>;
  close(): Promise<void>;
}

interface Waiter {
  resolve(response: AuthorizationResponse): void;
  reject(error: Error): void;
}

/** Listens on 127.0.0.1:`preferredPort`, or on an ephemeral port when that one is taken (or not given). */
export async function startLoopbackCallback(preferredPort?: number): Promise<LoopbackCallback> {
  const waiters = new Map<string, Waiter>();
  const server = createServer((request, response) => answer(request, response, waiters));
  const port = await listen(server, preferredPort).catch(() => listen(server, 0));
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    port,
    waitFor(state, timeoutMs) {
      return new Promise<AuthorizationResponse>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(state);
          reject(
            new AuthRequiredError(
              `Sign-in timed out after ${Math.round(timeoutMs / 1000)} s without an answer from the browser; ` +
                "sign in again (raise --auth-timeout if you need more time).",
              "timeout",
            ),
          );
        }, timeoutMs);
        waiters.set(state, {
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
      });
    },
    close,
  };
}

function listen(server: ReturnType<typeof createServer>, port = 0): Promise<number> {
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
    server.listen(port, "127.0.0.1");
  });
}

function answer(request: IncomingMessage, response: ServerResponse, waiters: Map<string, Waiter>): void {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  if (request.method !== "GET" || url.pathname !== CALLBACK_PATH) {
    page(response, 404, "Not found", "This address only receives sign-in answers.");
    return;
  }
  const state = url.searchParams.get("state") ?? "";
  const waiter = waiters.get(state);
  if (!waiter) {
    // A stale tab, a replay or a forged request: refuse it and keep waiting for the real answer.
    page(
      response,
      400,
      "Sign-in link not recognised",
      "This answer does not belong to the sign-in in progress.",
    );
    return;
  }
  const error = url.searchParams.get("error");
  const code = url.searchParams.get("code");
  if (error) {
    waiters.delete(state);
    const denied = error === "access_denied";
    page(
      response,
      200,
      denied ? "Sign-in cancelled" : "Sign-in failed",
      "You can close this tab and return to the terminal.",
    );
    waiter.reject(
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
  waiters.delete(state);
  page(response, 200, "Signed in", "You can close this tab and return to the terminal.");
  waiter.resolve({ state, code });
}

// The error code is echoed into a message; keep it to the RFC 6749 character set so nothing odd reaches a terminal.
function safeErrorCode(error: string): string {
  return /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(error) ? error : "unknown error";
}

function page(response: ServerResponse, status: number, title: string, text: string): void {
  response.writeHead(status, {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    Connection: "close",
  });
  response.end(
    `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
      `<body><h1>${title}</h1><p>${text}</p></body></html>\n`,
  );
}
