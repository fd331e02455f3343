/** What the user sees of a sign-in: the URL shown (and opened where a browser can open), and what to do when it waits. */
import { existsSync } from "node:fs";
import { UnsafeUrlError } from "./errors.js";
import { assertBrowsableUrl, openUrl } from "./open-url.js";
import type { AuthLog } from "./token-store.js";

/**
 * Shows `url` on stderr and opens it, unless there is no browser to open (`--no-browser`, no desktop session and
 * no `$BROWSER`) or the opener fails. "not-opened" means the user must open it themselves.
 */
export async function presentSignInUrl(
  url: string,
  options: { openBrowser: boolean; env?: NodeJS.ProcessEnv | undefined; authTimeoutMs: number; log: AuthLog },
): Promise<"opened" | "not-opened"> {
  assertBrowsableUrl(url);
  const seconds = Math.round(options.authTimeoutMs / 1000);
  // The log file keeps the URL and the wait (the URL is a one-time loopback page, no `state`, no secret).
  options.log("debug", `Sign-in waiting up to ${seconds} s for a browser at ${url}`);
  const noBrowser = options.openBrowser ? headlessReason(options.env ?? process.env) : "--no-browser";
  if (noBrowser === "--no-browser") {
    process.stderr.write(`Open this URL to sign in: ${url}\n(The sign-in waits up to ${seconds} s.)\n`);
    return "not-opened";
  }
  if (noBrowser !== undefined) {
    process.stderr.write(
      `No browser can be opened here (${noBrowser}). Open this URL in a browser on this machine to sign in ` +
        `(within ${seconds} s):\n  ${url}\n`,
    );
    return "not-opened";
  }
  process.stderr.write("Opening your browser to sign in. If it does not open, visit this URL:\n");
  process.stderr.write(`  ${url}\n`);
  try {
    // Openers such as xdg-open exit at once, non-zero, when they find no browser.
    await openUrl(url, { env: options.env, confirmMs: 1_500 });
    return "opened";
  } catch (error) {
    if (error instanceof UnsafeUrlError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(`No browser opened (${reason.replace(/[\u0000-\u001f\u007f-\u009f]/gu, " ")}).\n`);
    return "not-opened";
  }
}

/** What the user (and, through the bridge, the MCP client) is told when the sign-in waits for them. */
export function waitingMessage(
  url: string,
  why: "no-browser" | "cookie-refused",
  options: { loginCommand: string; authTimeoutMs: number },
): string {
  const login = options.loginCommand;
  const seconds = Math.round(options.authTimeoutMs / 1000);
  return why === "no-browser"
    ? `Sign-in needed, and no browser could be opened here. Open ${url} in a browser on this machine within ` +
        `${seconds} s, or run \`${login}\` in a terminal; then try again.`
    : "Sign-in refused: the browser that opened the sign-in page did not keep its cookie (a curl-like " +
        "$BROWSER, or cookies blocked), so its answer cannot be told from someone else's. Set $BROWSER to a " +
        `browser that keeps cookies, or run \`${login}\` in a terminal and open the URL it prints; then try again.`;
}

/** A sign-in problem the user must act on now (the browser dropped the sign-in cookie), on stderr. */
export function showSignInProblem(message: string): void {
  process.stderr.write(`${message}\n`);
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

/** WSL with Windows interop on: the `open` package starts the Windows browser through it. */
function hasWslInterop(): boolean {
  return (
    existsSync("/proc/sys/fs/binfmt_misc/WSLInterop") ||
    existsSync("/proc/sys/fs/binfmt_misc/WSLInterop-late")
  );
}
