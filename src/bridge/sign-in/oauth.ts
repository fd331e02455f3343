/** The bridge's OAuth session, built from the command line (sign-in, refresh and revocation load when first needed). */

import { basename, isAbsolute } from "node:path";
import { readClientPrivateKey } from "../../auth/client-key.js";
import type { OAuthSessionOptions, SignInPrompt } from "../../auth/index.js";
import { OAuthSession } from "../../auth/session/index.js";
import { configDir } from "../../config/index.js";
import type { BridgeLog } from "../log/log.js";
import type { BridgeOptions } from "../options/bridge-options.js";
import { SignInUrlRefused, suggestedMcpUrl } from "../upstream/http/endpoint-check.js";
import type { SignInProcessCommand } from "./sign-in-process.js";

/**
 * The OAuth session for `options.url`, keyed by the URL and the names (never values) of custom headers. The relay
 * answers the client's pending request at once when the sign-in waits for the user; a terminal shows the URL, and waits.
 */
export async function createBridgeAuth(
  options: Omit<BridgeOptions, "url"> & { url: URL },
  log: BridgeLog,
  env: Record<string, string | undefined> = process.env,
  use: "relay" | "terminal" = "terminal",
  onSignInPrompt?: (prompt: SignInPrompt) => void,
  signInProcess?: SignInProcessCommand,
  fetch?: typeof globalThis.fetch,
): Promise<OAuthSession> {
  // The key is read (and its file's permissions checked) once, here: it never travels in argv or the environment.
  const clientCredentials = options.clientCredentials
    ? {
        ...(options.clientPrivateKeyFile !== undefined
          ? { privateKey: readClientPrivateKey(options.clientPrivateKeyFile) }
          : {}),
      }
    : undefined;
  const authLog = (level: string, message: string) =>
    level === "debug" ? log.debug(message) : log.info(message);
  const sessionOptions: OAuthSessionOptions = {
    serverUrl: options.url.href,
    tokenStore: options.tokenStore,
    configDir: configDir(env),
    headerNames: options.headers.map((header) => header.name),
    profile: options.profile,
    resource: options.resource,
    callbackHost: options.callbackHost,
    callbackPath: options.callbackPath,
    authSuccessUrl: options.authSuccessUrl,
    useIdToken: options.useIdToken,
    callbackPort: options.callbackPort,
    openBrowser: options.openBrowser,
    deviceCode: options.deviceCode,
    authTimeoutMs: options.authTimeoutMs,
    clientId: options.clientId,
    // A key file makes it private_key_jwt: a secret in the environment is then not sent.
    clientSecret: clientCredentials?.privateKey ? undefined : options.clientSecret,
    ...(clientCredentials ? { clientCredentials } : {}),
    ...(options.workloadTokenFile !== undefined
      ? { workloadIdentity: { tokenFile: options.workloadTokenFile } }
      : {}),
    ...(options.enterpriseIdp ? { enterpriseIdentity: enterpriseIdentityOf(options.enterpriseIdp) } : {}),
    clientMetadataUrl: options.clientMetadataUrl,
    allowHttp: options.allowHttp,
    ...(options.authorizeParams ? { authorizeParams: options.authorizeParams } : {}),
    disableResourceParameter: options.disableResourceParameter,
    ...(options.clientMetadata ? { clientMetadata: options.clientMetadata } : {}),
    clientName: "chat-mcp-bridge",
    dpop: true,
    answerAtOnceWhenWaiting: use === "relay",
    loginCommand: bridgeLoginCommand(options, env),
    ...(onSignInPrompt ? { onSignInPrompt } : {}),
    log: authLog,
    env: env as NodeJS.ProcessEnv,
    ...(fetch ? { fetch } : {}),
  };
  // The relay's sign-ins with a person run in their own process, which outlives a bridge a one-shot host stops.
  if (use === "relay" && signInProcess)
    sessionOptions.signInElsewhere = async (request, prompt) => {
      const { signInInOwnProcess, signInProcessOptions } = await import("./sign-in-process.js");
      const parts = { env, stderr: process.stderr, log: authLog };
      return signInInOwnProcess(signInProcess, signInProcessOptions(sessionOptions), parts)(request, prompt);
    };
  const session = new OAuthSession(sessionOptions);
  // The relay reads the stored login while the rest of its start goes on: the first answer does not wait for it.
  if (use === "relay") session.readAhead();
  return session;
}

function enterpriseIdentityOf(idp: NonNullable<BridgeOptions["enterpriseIdp"]>) {
  return {
    idpIssuer: idp.issuer,
    idpClientId: idp.clientId,
    idTokenFile: idp.idTokenFile,
    ...(idp.clientSecret ? { idpClientSecret: idp.clientSecret } : {}),
  };
}

/**
 * The terminal command that signs in with the same login (URL, profile, header names and client options), as
 * this process was started: `npx -y chat-mcp-bridge` under npx, the bare name only when that is what ran, else
 * `node <path to the bin>`; a bare name that is not on the PATH would be no help.
 */
export function bridgeLoginCommand(
  options: Omit<BridgeOptions, "url"> & { url: URL },
  env: Record<string, string | undefined> = process.env,
  argv: readonly string[] = process.argv,
): string {
  const words = [...invocationWords(env, argv), "login"];
  if (options.profile) words.push("--profile", options.profile);
  // Where the login is kept: a login stored elsewhere is one the relay never reads.
  if (options.tokenStore !== "auto") words.push("--token-store", options.tokenStore);
  if (options.deviceCode) words.push("--device-code");
  // The client and its redirect URI are part of the registration the login is made with; secrets stay in the
  // environment, and an assertion's flags are file paths only.
  if (options.clientId) words.push("--client-id", quoted(options.clientId));
  if (options.clientMetadataUrl) words.push("--client-metadata-url", quoted(options.clientMetadataUrl));
  if (options.clientMetadata) words.push("(your --static-oauth-client-metadata)");
  // The stored token is the ID token with --use-id-token: the same flag, the same login.
  if (options.useIdToken) words.push("--use-id-token");
  if (options.callbackPort !== undefined) words.push("--callback-port", String(options.callbackPort));
  if (options.callbackHost) words.push("--host", quoted(options.callbackHost));
  if (options.callbackPath) words.push("--callback-path", quoted(options.callbackPath));
  // What changes the sign-in's requests, so the token is the one the relay asks for.
  if (options.resource) words.push("--resource", quoted(options.resource));
  if (options.disableResourceParameter) words.push("--disable-resource-parameter");
  for (const [key, value] of Object.entries(options.authorizeParams ?? {}))
    words.push("--authorize-param", quoted(`${key}=${value}`));
  if (options.allowHttp) words.push("--allow-http");
  if (options.clientId && (options.workloadTokenFile !== undefined || options.enterpriseIdp)) {
    if (options.workloadTokenFile !== undefined)
      words.push("--workload-token-file", quoted(options.workloadTokenFile));
    const idp = options.enterpriseIdp;
    if (idp) {
      words.push("--idp-issuer", quoted(idp.issuer), "--idp-client-id", quoted(idp.clientId));
      words.push("--idp-id-token-file", quoted(idp.idTokenFile));
    }
  }
  // The header names are part of the login's key: the same files, the same login.
  for (const file of new Set(options.headers.flatMap((header) => (header.file ? [header.file] : []))))
    words.push("--header-file", quoted(file));
  if (options.headers.some((header) => !header.file)) words.push("(your --header options)");
  words.push(options.url.href);
  return words.join(" ");
}

function invocationWords(env: Record<string, string | undefined>, argv: readonly string[]): string[] {
  // npm exec (npx) marks the processes it starts; its cache folder is no place to run the bin from by hand.
  if (env.npm_command === "exec" || env.npm_lifecycle_event === "npx")
    return ["npx", "-y", "chat-mcp-bridge"];
  const script = argv[1];
  if (!script) return ["chat-mcp-bridge"];
  if (basename(script) === "chat-mcp-bridge" && !isAbsolute(script)) return ["chat-mcp-bridge"];
  if (basename(script) === "chat-mcp-bridge") return [quoted(script)];
  return ["node", quoted(script)];
}

const quoted = (word: string): string => (/^[\w./:@+=-]+$/.test(word) ? word : JSON.stringify(word));

/**
 * `<base>/v2` (and any path under it) is the chat service's REST API: it answers an unauthenticated request with a Bearer challenge for
 * itself, so it passes for a protected MCP endpoint. When `<base>/mcp` answers as one, the URL is refused before
 * any sign-in, naming that endpoint; undefined otherwise (another server may well serve MCP at a `/v2` path).
 */
export async function restApiUrlRefusal(url: URL): Promise<string | undefined> {
  // `<base>/v2` and the paths under it (`/v2/chats`): the authorization server refuses those as a resource on
  // its own page, which the bridge never sees, so the sign-in would wait for nothing.
  if (!/\/v2(\/.*)?$/.test(url.pathname) || /\/mcp\/?$/.test(url.pathname)) return undefined;
  const suggestion = await suggestedMcpUrl(url);
  return suggestion
    ? `${url.href} is the chat service's REST API, not its MCP endpoint; use ${suggestion} instead.`
    : undefined;
}

/** Throws SignInUrlRefused with `restApiUrlRefusal`'s reason, when there is one. */
export async function refuseRestApiUrl(url: URL): Promise<void> {
  const refusal = await restApiUrlRefusal(url);
  if (refusal) throw new SignInUrlRefused(refusal);
}
