/** What the user sees of a sign-in: the URL shown (and opened where a browser can open), the device code, and what to do when it waits. */
import { existsSync } from "node:fs";
import { sanitizeForTerminal } from "../internal/redact.js";
import { UnsafeUrlError } from "./errors.js";
import type { AuthLog } from "./login-store.js";
import { openUrl } from "./open-url.js";
import { checkShownUrl } from "./shown-url.js";

/**
 * Shows `url` on stderr and opens it, unless there is no browser to open (`--no-browser`, no desktop session and
 * no `$BROWSER`) or the opener fails. "not-opened" means the user must open it themselves; "device-code" (only
 * with `deviceCodeFallback`, never after `--no-browser`) that no browser could open and the device code takes over.
 * `answered` is the sign-in's answer: once it has come (or the sign-in ended), the opener's own failure is no news.
 */
export async function presentSignInUrl(
  url: string,
  options: {
    openBrowser: boolean;
    env?: NodeJS.ProcessEnv | undefined;
    authTimeoutMs: number;
    log: AuthLog;
    deviceCodeFallback?: boolean;
    answered?: Promise<unknown>;
    /** The opener has exited (see `PendingBrowserSignIn.openerExited`). */
    onOpenerExit?: () => void;
  },
): Promise<"opened" | "not-opened" | "device-code"> {
  const shown = checkShownUrl(url, "sign-in URL");
  url = shown.href;
  const seconds = Math.round(options.authTimeoutMs / 1000);
  // The log file keeps the URL and the wait (the URL is a one-time loopback page, no `state`, no secret).
  options.log("debug", `Sign-in waiting up to ${seconds} s for a browser at ${url}`);
  const noBrowser = options.openBrowser ? headlessReason(options.env ?? process.env) : "--no-browser";
  if (noBrowser === "--no-browser") {
    process.stderr.write(
      `Open this URL to sign in at ${shown.site}: ${url}\n(The sign-in waits up to ${seconds} s.)\n`,
    );
    return "not-opened";
  }
  if (noBrowser !== undefined) {
    if (options.deviceCodeFallback) {
      showDeviceCodeFallback(noBrowser);
      return "device-code";
    }
    process.stderr.write(
      `No browser can be opened here (${noBrowser}). Open this URL in a browser on this machine to sign in at ` +
        `${shown.site} (within ${seconds} s):\n  ${url}\n`,
    );
    return "not-opened";
  }
  // $BROWSER may be any program (a headless opener in CI, a script): only a desktop's opener is "your browser".
  const lead = (options.env ?? process.env).BROWSER?.trim()
    ? `Opening the sign-in URL (${shown.site}) with the $BROWSER command. If the sign-in does not go on, visit this URL:`
    : `Opening your browser to sign in at ${shown.site}. If it does not open, visit this URL:`;
  // With a device code to fall back on, a link is shown only once a browser took it: a link no browser opened
  // would sit above the device code's URL, the one that works.
  const showLink = () => process.stderr.write(`${lead}\n  ${url}\n`);
  if (!options.deviceCodeFallback) showLink();
  const ignore = () => undefined;
  try {
    // Openers such as xdg-open exit at once, non-zero, when they find no browser.
    await Promise.race([
      openUrl(url, {
        env: options.env,
        confirmMs: 1_500,
        ...(options.onOpenerExit ? { onExit: options.onOpenerExit } : {}),
      }),
      options.answered?.then(ignore, ignore) ?? new Promise(ignore),
    ]);
    if (options.deviceCodeFallback) showLink();
    return "opened";
  } catch (error) {
    if (error instanceof UnsafeUrlError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(`No browser opened (${reason.replace(/[\u0000-\u001f\u007f-\u009f]/gu, " ")}).\n`);
    if (options.deviceCodeFallback) {
      process.stderr.write("Signing in with a device code instead.\n");
      return "device-code";
    }
    return "not-opened";
  }
}

/** No browser can open here, and the authorization server offers the device code: said once, on stderr. */
export function showDeviceCodeFallback(reason: string): void {
  process.stderr.write(`No browser can be opened here (${reason}); signing in with a device code instead.\n`);
}

/** A device authorization as the person reads it: server text, made safe for a terminal. */
export interface DeviceCodePrompt {
  /** `verification_uri_complete` when the server gave it (the code is then in the URL), else `verification_uri`. */
  url: string;
  userCode: string;
  /** True when `url` carries the code: the person checks it instead of typing it. */
  complete: boolean;
}

/** Shows the device code on stderr: where to go, the code, and how long the sign-in waits. */
export function presentDeviceCode(prompt: DeviceCodePrompt, options: { waitMs: number; log: AuthLog }): void {
  const { url, site, userCode } = visibleDeviceCode(prompt);
  const seconds = Math.round(options.waitMs / 1000);
  options.log("debug", `Sign-in waiting up to ${seconds} s for the device code to be approved at ${url}`);
  process.stderr.write(
    `To sign in at ${site}, open this URL in a browser on any device:\n  ${url}\n` +
      `${prompt.complete ? "and check that it shows the code" : "and enter the code"} ${userCode}\n` +
      `(The sign-in waits up to ${seconds} s.)\n`,
  );
}

/** What the user (and, through the bridge, the MCP client) is told when the sign-in waits for them. */
export function waitingMessage(
  url: string,
  why: "no-browser" | "device-code",
  options: { loginCommand: string; authTimeoutMs: number; deviceCode?: DeviceCodePrompt },
): string {
  const seconds = Math.round(options.authTimeoutMs / 1000);
  if (why === "device-code") {
    const prompt = options.deviceCode ?? { url, userCode: "", complete: true };
    const shown = visibleDeviceCode(prompt);
    return (
      `Sign-in needed: sign in at ${shown.site}: open ${shown.url} in a browser on any device and ` +
      `${prompt.complete ? "check that it shows" : "enter"} the code ${shown.userCode} within ` +
      `${seconds} s; then try again.`
    );
  }
  const shown = checkShownUrl(url, "sign-in URL");
  return (
    `Sign-in needed at ${shown.site}, and no browser could be opened here. Open ${shown.href} in a browser on ` +
    `this machine within ${seconds} s, or run \`${options.loginCommand}\` in a terminal; then try again.`
  );
}

/**
 * Why a sign-in ended when its own answer was refused (see `RefusedAnswer`), and what to do instead. `atTerminal`:
 * the person runs a `login` command, so the fixes are the ones that command takes (the bridge's MCP client is told
 * of `login` by the bridge itself).
 */
export function refusedAnswerMessage(
  why: "cookie-refused" | "not-a-browser",
  opener: string | undefined,
  atTerminal: boolean,
): string {
  const what =
    why === "cookie-refused"
      ? "Sign-in refused: the browser that opened the sign-in page did not keep its cookie (a curl-like " +
        "$BROWSER, or cookies blocked), so its answer cannot be told from someone else's."
      : `Sign-in refused: the sign-in page was opened by ${opener ?? "a program"}, which is no web browser: it ` +
        "exited without finishing the sign-in, and nothing else can finish it.";
  const fix = atTerminal
    ? "Set $BROWSER to a browser that keeps cookies (or unset it to use your default browser), or sign in again " +
      "with --no-browser and open the URL it prints in a browser."
    : "Set $BROWSER to a browser that keeps cookies.";
  return `${what} ${fix}`;
}

/**
 * Why no browser can open here, or undefined. Linux: no desktop session (X forwarding over SSH sets `DISPLAY` and
 * works), unless WSL can hand the URL to the Windows browser. macOS and Windows: a session over SSH, where `open`
 * would show the page on the machine's own screen (or nowhere), not to the person at the SSH client.
 * `$BROWSER` always wins: the user said how to open URLs here.
 */
export function headlessReason(
  env: NodeJS.ProcessEnv,
  {
    platform = process.platform,
    wslInterop = hasWslInterop,
  }: { platform?: NodeJS.Platform; wslInterop?: () => boolean } = {},
): string | undefined {
  if (env.BROWSER?.trim()) return undefined;
  if (platform === "darwin" || platform === "win32") {
    return env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY
      ? "a session over SSH, with no $BROWSER: the system's opener would show the page on the remote screen"
      : undefined;
  }
  if (platform !== "linux") return undefined;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return undefined;
  if (wslInterop()) return undefined;
  return "no $BROWSER and no desktop session: DISPLAY and WAYLAND_DISPLAY are unset";
}

/** The device code's URL through the one URL check (its `href` and site), and the server's user code made visible. */
function visibleDeviceCode(prompt: DeviceCodePrompt): { url: string; site: string; userCode: string } {
  const shown = checkShownUrl(prompt.url, "verification URL");
  return {
    url: shown.href,
    site: shown.site,
    userCode: sanitizeForTerminal(prompt.userCode, { oneLine: true }),
  };
}

/** WSL with Windows interop on: the `open` package starts the Windows browser through it. */
function hasWslInterop(): boolean {
  return (
    existsSync("/proc/sys/fs/binfmt_misc/WSLInterop") ||
    existsSync("/proc/sys/fs/binfmt_misc/WSLInterop-late")
  );
}
