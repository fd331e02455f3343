/** The bridge's OAuth session, built from the command line; the auth module is loaded only when needed. */

import type { OAuthSession } from "../auth/session.js";
import { configDir } from "../config/index.js";
import type { BridgeOptions } from "./cli.js";
import type { BridgeLog } from "./log.js";

/** Creates the OAuth session for `options.url`, keyed by the URL and the names (never values) of custom headers. */
export async function createBridgeAuth(
  options: Omit<BridgeOptions, "url"> & { url: URL },
  log: BridgeLog,
  env: Record<string, string | undefined> = process.env,
): Promise<OAuthSession> {
  const { OAuthSession } = await import("../auth/session.js");
  return new OAuthSession({
    serverUrl: options.url.href,
    tokenStore: options.tokenStore,
    configDir: configDir(env),
    headerNames: options.headers.map((header) => header.name),
    profile: options.profile,
    resource: options.resource,
    callbackHost: options.callbackHost,
    callbackPort: options.callbackPort,
    openBrowser: options.openBrowser,
    authTimeoutMs: options.authTimeoutMs,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    clientMetadataUrl: options.clientMetadataUrl,
    allowHttp: options.allowHttp,
    clientName: "chat-mcp-bridge",
    log: (level, message) => (level === "debug" ? log.debug(message) : log.info(message)),
    env: env as NodeJS.ProcessEnv,
  });
}
