/** `chat-cli login [--no-browser] [--device-code] [--auth-timeout <s>] [--token-store <store>] [--client-credentials --client-id <id> [--client-private-key <pem>]] [--client-id <id> --workload-token-file <path>] [--callback-path <path>] [--auth-success-url <url>]`, or `chat-cli login --with-token` (the key on stdin, stored as the login): OAuth sign-in (shared with the bridge) for the REST resource `<base>/v2`. */
import { callbackPathProblem, successUrlProblem } from "../../auth/session/provider-options.js";
import { configDir } from "../../config/index.js";
import { redactForTerminal, rememberSecret } from "../../internal/redact.js";
import { UsageError } from "../../internal/usage-error.js";
import { assertBaseUrl, type CliContext, untilInterrupted } from "../context.js";
import {
  type CommandInput,
  defineCommand,
  negatedSwitch,
  parseAuthTimeout,
  parseTokenStore,
  switchFlag,
  valueFlag,
  withDefault,
} from "../define-command.js";
import { CliError, EXIT } from "../errors.js";
import { printHint, printJson, shown } from "../output.js";

const loginFlags = {
  /** false after `--no-browser`: print the sign-in URL instead of opening it. */
  browser: negatedSwitch("--no-browser", "print the sign-in URL instead of opening a browser"),
  deviceCode: switchFlag(
    "--device-code",
    "sign in with a code entered in a browser on any device (OAuth device code, RFC 8628); also used by itself when no browser can open here and the server offers it",
  ),
  authTimeoutMs: valueFlag(
    "--auth-timeout <seconds>",
    "how long to wait for the sign-in, in a browser or with a device code (default 300)",
    parseAuthTimeout,
  ),
  tokenStore: withDefault(
    valueFlag(
      "--token-store <store>",
      "where the credentials are kept: auto (keychain, else a 0600 file), keychain or file",
      parseTokenStore,
    ),
    "auto",
  ),
  clientCredentials: switchFlag(
    "--client-credentials",
    "sign in as the --client-id client itself, with no browser (for CI jobs)",
  ),
  clientId: valueFlag(
    "--client-id <id>",
    "the pre-registered OAuth client (its secret, if any, from $CHAT_MCP_CLIENT_SECRET)",
  ),
  clientPrivateKeyFile: valueFlag(
    "--client-private-key <pem-file>",
    "with --client-credentials: sign private_key_jwt assertions with this key (a file only you can read)",
  ),
  workloadTokenFile: valueFlag(
    "--workload-token-file <path>",
    "sign in as --client-id with the workload identity token a platform writes to this file (Kubernetes, CI OIDC)",
  ),
  callbackPath: valueFlag(
    "--callback-path <path>",
    "path of the OAuth callback's redirect URI (default /callback)",
  ),
  authSuccessUrl: valueFlag(
    "--auth-success-url <url>",
    "http(s) page the browser is sent to after a successful sign-in",
  ),
  withToken: switchFlag(
    "--with-token",
    "read an API key or access token from stdin and store it, with no sign-in (keeps it out of argv and shell history)",
  ),
};
export type LoginOptions = CommandInput<Record<never, never>, typeof loginFlags>;

const AUTH_TIMEOUT_MS = 5 * 60_000;

/** The OAuth session of chat-cli for the base URL in effect (the resource is `<base>/v2`). */
export async function loginSession(ctx: CliContext, options: LoginOptions) {
  assertBaseUrl(ctx.globals.baseUrl);
  const { OAuthSession, readClientPrivateKey, restServerUrl } = await import("../../auth/index.js");
  const env = ctx.env ?? process.env;
  if (options.clientPrivateKeyFile !== undefined && !options.clientCredentials) {
    throw new UsageError("--client-private-key goes with --client-credentials");
  }
  if (options.workloadTokenFile !== undefined && (!options.clientId || options.clientCredentials)) {
    throw new UsageError(
      options.clientCredentials
        ? "--workload-token-file and --client-credentials are two ways of signing in; choose one"
        : "--workload-token-file needs --client-id <id>",
    );
  }
  if (options.clientCredentials && !options.clientId) {
    throw new UsageError("--client-credentials needs --client-id <id>");
  }
  if (
    options.clientCredentials &&
    options.clientPrivateKeyFile === undefined &&
    !env.CHAT_MCP_CLIENT_SECRET
  ) {
    throw new UsageError(
      "--client-credentials needs the client's secret in $CHAT_MCP_CLIENT_SECRET or --client-private-key <pem-file>",
    );
  }
  checkCallbackPages(options);
  const privateKey =
    options.clientPrivateKeyFile !== undefined
      ? readClientPrivateKey(options.clientPrivateKeyFile)
      : undefined;
  return new OAuthSession({
    serverUrl: restServerUrl(ctx.globals.baseUrl),
    tokenStore: options.tokenStore ?? "auto",
    configDir: configDir(ctx.env ?? process.env),
    openBrowser: options.browser,
    deviceCode: options.deviceCode === true,
    authTimeoutMs: options.authTimeoutMs ?? AUTH_TIMEOUT_MS,
    loginCommand: `chat-cli --base-url ${ctx.globals.baseUrl} login${options.deviceCode ? " --device-code" : ""}`,
    log: (level, message) => {
      if (level !== "debug" || ctx.globals.debug) ctx.io.stderr(`${redactForTerminal(message)}\n`);
    },
    clientName: "chat-cli",
    // A run given an environment and a fetch (in-process tests) signs in through them: $BROWSER, proxies, requests.
    ...(ctx.env ? { env: ctx.env as NodeJS.ProcessEnv } : {}),
    ...(ctx.fetch ? { fetch: ctx.fetch as typeof fetch } : {}),
    callbackPath: options.callbackPath,
    authSuccessUrl: options.authSuccessUrl,
    ...(options.clientId ? { clientId: options.clientId } : {}),
    ...(options.clientId && !privateKey && env.CHAT_MCP_CLIENT_SECRET
      ? { clientSecret: env.CHAT_MCP_CLIENT_SECRET }
      : {}),
    ...(options.clientCredentials ? { clientCredentials: privateKey ? { privateKey } : {} } : {}),
    ...(options.workloadTokenFile !== undefined
      ? { workloadIdentity: { tokenFile: options.workloadTokenFile } }
      : {}),
  });
}

/** The first sign-in flag given, which `--with-token` does not go with (`--no-browser` is given when browser is false). */
function signInFlagGiven(options: LoginOptions): string | undefined {
  const given = Object.entries(loginFlags).find(([key]) => {
    const value = options[key as keyof LoginOptions];
    return (
      key !== "withToken" && key !== "tokenStore" && value !== undefined && value !== (key === "browser")
    );
  });
  return given?.[1].flags.split(" ")[0];
}

/** `--callback-path` and `--auth-success-url` refused as usage errors, before any request. */
function checkCallbackPages(options: LoginOptions): void {
  const path = options.callbackPath === undefined ? undefined : callbackPathProblem(options.callbackPath);
  if (path) throw new UsageError(`--callback-path: ${path}`);
  const page = options.authSuccessUrl === undefined ? undefined : successUrlProblem(options.authSuccessUrl);
  if (page) throw new UsageError(`--auth-success-url: ${page}`);
}

export async function login(options: LoginOptions, ctx: CliContext): Promise<void> {
  if (options.withToken) {
    const signIn = signInFlagGiven(options);
    if (signIn) throw new UsageError(`--with-token stores a key without signing in; drop ${signIn}`);
    return loginWithToken(ctx, options.tokenStore ?? "auto");
  }
  const session = await loginSession(ctx, options);
  // Ctrl-C while the sign-in waits exits at once; the login lock is released on the way out (see login-lock.ts).
  const summary = await untilInterrupted(
    ctx,
    session.signIn(),
    () => new CliError("sign-in interrupted; nothing was saved.", EXIT.interrupted),
  );
  const storage = await session.describeStorage();
  // The account or team chosen at consent, as the token response named it (whoami shows the same).
  const account = (await session.describeLogin())?.account;
  if (ctx.globals.json) {
    return printJson(ctx.io, {
      baseUrl: ctx.globals.baseUrl,
      storedIn: summary.storedIn,
      scope: summary.scope ?? null,
      account: account ?? null,
    });
  }
  const as =
    options.clientCredentials || options.workloadTokenFile !== undefined
      ? ` as client ${options.clientId}`
      : account
        ? ` as ${shown(account)}`
        : "";
  printHint(ctx.io, `Signed in to ${ctx.globals.baseUrl}${as}.`);
  printHint(
    ctx.io,
    `Credentials stored in the ${storage.kind} (${storage.location}). Check with \`chat-cli whoami\`.`,
  );
}

// `--with-token`: the API key (or access token) read from stdin and stored as the login for this base URL.

/** A key is a line; more than this on stdin is not one. */
const MAX_TOKEN_BYTES = 16 * 1024;

/** Reads stdin to its end (bounded), without one trailing newline; empty or several lines are usage errors. */
async function readTokenFrom(stdin: AsyncIterable<string | Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk);
    size += bytes.length;
    if (size > MAX_TOKEN_BYTES)
      throw new UsageError(`--with-token: stdin holds more than ${MAX_TOKEN_BYTES} bytes; give one key`);
    chunks.push(bytes);
  }
  const token = Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
  if (token.trim() === "")
    throw new UsageError(
      "--with-token: nothing on stdin; pipe the key in",
      "For example: chat-cli login --with-token < key.txt",
    );
  if (/[\r\n]/.test(token) || token !== token.trim())
    throw new UsageError("--with-token: stdin must hold the key alone, on one line");
  return token;
}

/** Stores the key where `chat-cli login` keeps its credentials (the same login record), so every command finds it. */
async function loginWithToken(ctx: CliContext, tokenStore: "auto" | "keychain" | "file"): Promise<void> {
  assertBaseUrl(ctx.globals.baseUrl);
  const token = await readTokenFrom(ctx.stdin ?? process.stdin);
  rememberSecret(token);
  const { loginKey, restServerUrl, canonicalServerUrl } = await import("../../auth/index.js");
  const { loginPaths } = await import("../../auth/login-key.js");
  const { LoginStore } = await import("../../auth/login-store.js");
  const serverUrl = canonicalServerUrl(restServerUrl(ctx.globals.baseUrl));
  const key = loginKey(serverUrl);
  const log = (_level: string, message: string) => ctx.io.stderr(`${redactForTerminal(message)}\n`);
  const store = new LoginStore(tokenStore, key, loginPaths(configDir(ctx.env ?? process.env), key), log);
  const now = Date.now();
  // No expiry and no refresh token: the key is used as it is until `chat-cli logout` removes it.
  await store.save({
    version: 1,
    serverUrl,
    authorizationServerUrl: serverUrl,
    tokens: { accessToken: token, tokenType: "Bearer", issuedAt: now },
    savedAt: now,
  });
  const storage = await store.describe();
  if (ctx.globals.json) {
    return printJson(ctx.io, {
      baseUrl: ctx.globals.baseUrl,
      storedIn: storage.kind,
      scope: null,
      account: null,
    });
  }
  printHint(
    ctx.io,
    `Key stored for ${ctx.globals.baseUrl} in the ${storage.kind} (${storage.location}). Check with \`chat-cli whoami\`.`,
  );
}

export const loginCommand = defineCommand({ arguments: {}, options: loginFlags, run: login });
