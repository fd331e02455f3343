/** `chat-cli login [--no-browser] [--device-code] [--auth-timeout <s>] [--token-store <store>]`: OAuth sign-in (shared with the bridge) for the REST resource `<base>/v2`. */
import { configDir } from "../../config/index.js";
import { redactForTerminal } from "../../internal/redact.js";
import { assertBaseUrl, type CliContext } from "../context.js";
import { printHint, printJson } from "../output.js";

export interface LoginOptions {
  /** false after `--no-browser`: print the sign-in URL instead of opening it. */
  browser: boolean;
  /** `--device-code`: sign in with a device code (RFC 8628) entered in a browser on any device. */
  deviceCode?: boolean | undefined;
  /** `--auth-timeout` in milliseconds; default 300 s. */
  authTimeoutMs?: number | undefined;
  /** `--token-store`; default auto (keychain, else a 0600 file). */
  tokenStore?: "auto" | "keychain" | "file" | undefined;
}

const AUTH_TIMEOUT_MS = 5 * 60_000;

/** The OAuth session of chat-cli for the base URL in effect (the resource is `<base>/v2`). */
export async function loginSession(ctx: CliContext, options: LoginOptions) {
  assertBaseUrl(ctx.globals.baseUrl);
  const { OAuthSession, restServerUrl } = await import("../../auth/index.js");
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
  });
}

export async function login(options: LoginOptions, ctx: CliContext): Promise<void> {
  const session = await loginSession(ctx, options);
  const summary = await session.signIn();
  const storage = await session.describeStorage();
  if (ctx.globals.json) {
    return printJson(ctx.io, {
      baseUrl: ctx.globals.baseUrl,
      storedIn: summary.storedIn,
      scope: summary.scope ?? null,
    });
  }
  printHint(ctx.io, `Signed in to ${ctx.globals.baseUrl}.`);
  printHint(
    ctx.io,
    `Credentials stored in the ${storage.kind} (${storage.location}). Check with \`chat-cli whoami\`.`,
  );
}
