/** What the user sees of a sign-in: the URL shown (and opened where a browser can open), and what to do when it waits. */
import { UnsafeUrlError } from "./errors.js";
import { assertBrowsableUrl, openUrl } from "./open-url.js";
import type { AuthLog } from "./token-store.js";

/**
 * Shows `url` on stderr and opens it, unless there is no browser to open (`--no-browser`, no desktop session and
 * no `$BROWSER`) or the opener fails. "not-opened" means the user must open it themselves. `answered` is the
 * sign-in's answer: once it has come (or the sign-in ended), the opener's own failure is no news.
 */
export async function presentSignInUrl(
  url: string,
  options: {
    openBrowser: boolean;
    env?: NodeJS.ProcessEnv | undefined;
    authTimeoutMs: number;
    log: AuthLog;
    answered?: Promise<unknown>;
    /** The opener has exited (see `PendingAuthorization.openerExited`). */
    onOpenerExit?: () => void;
  },
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
    return "opened";
  } catch (error) {
    if (error instanceof UnsafeUrlError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(`No browser opened (${reason.replace(/[\u0000-\u001f\u007f-\u009f]/gu, " ")}).\n`);
    return "not-opened";
  }
}

/** What the user (and, through the bridge, the MCP client) is told when no browser could open the sign-in URL. */
export function waitingMessage(
  url: string,
  options: { loginCommand: string; authTimeoutMs: number },
): string {
  const seconds = Math.round(options.authTimeoutMs / 1000);
  return (
    `Sign-in needed, and no browser could be opened here. Open ${url} in a browser on this machine within ` +
    `${seconds} s, or run \`${options.loginCommand}\` in a terminal; then try again.`
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

/** Why no browser can open here (Linux without a desktop session and no `$BROWSER`), or undefined. */
export function headlessReason(env: NodeJS.ProcessEnv): string | undefined {
  if (process.platform !== "linux" || env.BROWSER?.trim()) return undefined;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return undefined;
  return "no $BROWSER and no desktop session: DISPLAY and WAYLAND_DISPLAY are unset";
}
