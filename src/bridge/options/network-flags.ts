/** mcp-remote's network and callback flags (time-outs, keep-alive, cookies, --use-id-token, the callback's path and success page), defined and checked. */
import { type Command, InvalidArgumentError } from "commander";
import { callbackPathProblem, successUrlProblem } from "../../auth/session/provider-options.js";
import { timerMilliseconds, timerSecondsRange } from "../../internal/deadline.js";
import { UsageError } from "../../internal/usage-error.js";

/** mcp-remote's default connection time-out, kept so configs behave the same. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** How often `--keep-alive` pings when `--ping-interval` does not say (mcp-remote's default). */
export const DEFAULT_PING_INTERVAL_MS = 30_000;

/** What these flags set in the bridge's options (a time-out of 0: none). */
export interface NetworkFlagOptions {
  /** Opening a connection: TCP, TLS, a proxy's CONNECT. */
  connectTimeoutMs?: number;
  headersTimeoutMs?: number | undefined;
  bodyTimeoutMs?: number | undefined;
  /** `--keep-alive` / `--ping-interval`: a `ping` to a 2025-era session after this long idle. */
  pingIntervalMs?: number | undefined;
  disableCookies?: boolean;
  useIdToken?: boolean | undefined;
  callbackPath?: string | undefined;
  authSuccessUrl?: string | undefined;
}

const seconds =
  (flag: string, zeroMeansNone: boolean) =>
  (value: string): number => {
    const ms = timerMilliseconds(value, { zeroMeansNone });
    if (ms === undefined)
      throw new InvalidArgumentError(`${flag} takes ${timerSecondsRange({ zeroMeansNone })}`);
    return ms;
  };

const callbackPath = (value: string): string => {
  const problem = callbackPathProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
};

/** Adds the flags to `command`. */
export function withNetworkFlags(command: Command): Command {
  return command
    .option(
      "--connect-timeout <seconds>",
      "how long opening a connection to the server may take (default 10)",
      seconds("--connect-timeout", false),
    )
    .option(
      "--headers-timeout <seconds>",
      "how long the server may take to start an answer (0 or absent: no limit)",
      seconds("--headers-timeout", true),
    )
    .option(
      "--body-timeout <seconds>",
      "how long an answer may go without a byte (0 or absent: no limit)",
      seconds("--body-timeout", true),
    )
    .option("--keep-alive", "ping an idle 2025-era session so proxies do not drop it (every 30 s)")
    .option(
      "--ping-interval <seconds>",
      "ping an idle 2025-era session this often (implies --keep-alive)",
      seconds("--ping-interval", false),
    )
    .option("--disable-cookies", "keep no cookies from the server (sticky sessions of load balancers)")
    .option("--use-id-token", "send the OIDC ID token as the bearer instead of the access token")
    .option(
      "--callback-path <path>",
      "path of the OAuth callback's redirect URI (default /callback)",
      callbackPath,
    )
    .option("--auth-success-url <url>", "http(s) page the browser is sent to after a successful sign-in");
}

/** The flags' values from commander's parsed options; `allowHttp` decides whether a plain http success page is allowed. */
export function networkFlagsOf(opts: Record<string, unknown>, allowHttp: boolean): NetworkFlagOptions {
  const authSuccessUrl = opts.authSuccessUrl as string | undefined;
  const problem = authSuccessUrl === undefined ? undefined : successUrlProblem(authSuccessUrl, allowHttp);
  if (problem) throw new UsageError(`--auth-success-url: ${problem}`);
  const pingIntervalMs =
    (opts.pingInterval as number | undefined) ??
    (opts.keepAlive === true ? DEFAULT_PING_INTERVAL_MS : undefined);
  return {
    connectTimeoutMs: (opts.connectTimeout as number | undefined) ?? DEFAULT_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: opts.headersTimeout as number | undefined,
    bodyTimeoutMs: opts.bodyTimeout as number | undefined,
    pingIntervalMs,
    disableCookies: opts.disableCookies === true,
    ...(opts.useIdToken === true ? { useIdToken: true } : {}),
    callbackPath: opts.callbackPath as string | undefined,
    authSuccessUrl,
  };
}
