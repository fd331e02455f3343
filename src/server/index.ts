/** Public entry of `chat-mcp-bridge/server`: `startReferenceServer()` and the pieces the server is built from. */
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { createReferenceApp, type ReferenceApp } from "./app.js";

import type { ReferenceServerOptions } from "./options.js";

export type {
  AssertionGrantOptions,
  DeviceAuthorizationOptions,
  DpopMode,
  DpopNonceMode,
  DpopReplayLimits,
  McpEndpointOptions,
  McpEra,
  OAuthRateLimits,
  OAuthRegistrationLimits,
  OAuthServerOptions,
  PreRegisteredOAuthClient,
  RateLimitOptions,
  ReferenceIdpOptions,
  ReferenceServerOptions,
  TrustedEnterpriseIdp,
  TrustedWorkloadIssuer,
} from "./options.js";

import { answerUnparsableRequest, toNodeListener } from "./node-http.js";
import { DataFileWriteError } from "./store.js";

export interface ReferenceServer {
  /** Base URL without trailing slash, e.g. `http://127.0.0.1:53211`. */
  url: string;
  /** `${url}/mcp`. */
  mcpUrl: string;
  /** Seeded account or team slug -> dev API key for `/v2` (kept in the data file across restarts). */
  apiKeys: Record<string, string>;
  /**
   * Read-only (a maintenance window): `/mcp` withdraws the tools that write (`create_chat`, `send_message`,
   * `resolve_task`: not listed, calls refused) until turned off; each change is announced with
   * `notifications/tools/list_changed` to 2025-era sessions and 2026-07-28 `subscriptions/listen` streams.
   */
  setReadOnly(readOnly: boolean): void;
  /** Stops listening and closes every open connection (including streams) at once. */
  close(): Promise<void>;
}

export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const publicUrl = options.publicUrl === undefined ? undefined : checkedPublicUrl(options.publicUrl);
  const host = options.host ?? "127.0.0.1";
  const server = createServer();
  server.on("clientError", answerUnparsableRequest);
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await listen(server, options.port ?? 0, host);
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("The reference server has no TCP address.");
  const baseUrl = (publicUrl ?? `http://${urlHost(host)}:${address.port}`).replace(/\/+$/, "");

  let app: ReferenceApp;
  try {
    app = createReferenceApp(options, baseUrl);
  } catch (error) {
    server.close();
    if (options.dataFile && error instanceof DataFileWriteError) {
      throw new Error(
        `The reference server cannot write its data file ${options.dataFile}: ${(error.cause as Error).message}`,
        { cause: error.cause },
      );
    }
    throw error;
  }
  const listenOrigin = `http://${urlHost(host)}:${address.port}`;
  server.on(
    "request",
    toNodeListener(app.fetch, () => listenOrigin),
  );

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    mcpUrl: `${baseUrl}/mcp`,
    apiKeys: { ...app.apiKeys },
    setReadOnly: (readOnly) => app.setReadOnly(readOnly),
    close: () => {
      closing ??= (async () => {
        await app.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        await closed;
      })();
      return closing;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** The host part of the base URL: loopback for wildcard binds, brackets for IPv6. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

export { ASSISTANT_RULES, type AssistantRule, ScriptedAssistant } from "./assistant.js";
export {
  type Account,
  type ChatService,
  type Principal,
  ServiceError,
  type TokenVerifier,
  type User,
} from "./context.js";
export { SEED_ACCOUNTS, SEED_USERS } from "./core.js";
export { createInProcessReferenceServer, type InProcessReferenceServer } from "./in-process.js";
export { DataFileWriteError } from "./store.js";

/**
 * `publicUrl` goes into links, redirects and `WWW-Authenticate` parameters: it must be a plain http(s) URL (no
 * user info, query, fragment, quotes, spaces or controls), used in its normalised form.
 */
function checkedPublicUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {}
  const problem = !url
    ? "is not a URL"
    : url.protocol !== "http:" && url.protocol !== "https:"
      ? "must be an http or https URL"
      : url.username || url.password
        ? "must not carry a user name or password"
        : url.search || url.hash || raw.includes("?") || raw.includes("#")
          ? "must not have a query or fragment"
          : /[\u0000-\u0020"'<>\\`\u007f-\u009f]/.test(raw)
            ? "must not contain quotes, spaces, backslashes or control characters"
            : undefined;
  if (problem) throw new TypeError(`publicUrl ${problem} (got ${JSON.stringify(raw)})`);
  return url!.href.replace(/\/+$/, "");
}
