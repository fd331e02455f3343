/** Chooses how the demo signs in: a person in a real browser, or headless with the server auto-approving. */

export type SignInMode = { kind: "browser"; reason: string } | { kind: "headless"; reason: string };

export interface SignInSituation {
  /** `--headless` was given. */
  forcedHeadless: boolean;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
}

/** Whether a browser can be opened here: `$BROWSER`, a desktop session on Linux/BSD, or macOS/Windows. */
export function browserAvailable(
  platform: NodeJS.Platform,
  env: Record<string, string | undefined>,
): string | null {
  if (env.BROWSER?.trim()) return "$BROWSER is set";
  if (platform === "darwin") return "macOS";
  if (platform === "win32") return "Windows";
  if (env.WAYLAND_DISPLAY?.trim()) return "a Wayland session";
  if (env.DISPLAY?.trim()) return "an X11 session";
  return null;
}

/** A real browser only when a person can see the terminal and a browser can be opened; else headless, saying why. */
export function chooseSignInMode(situation: SignInSituation): SignInMode {
  if (situation.forcedHeadless) return { kind: "headless", reason: "--headless was given" };
  if (!situation.stdinIsTTY || !situation.stdoutIsTTY) {
    return { kind: "headless", reason: "the demo is not running on a terminal" };
  }
  if (situation.env.CI?.trim() && situation.env.CI !== "false") {
    return { kind: "headless", reason: "$CI is set" };
  }
  const browser = browserAvailable(situation.platform, situation.env);
  if (!browser)
    return { kind: "headless", reason: "no browser is available (no $BROWSER, no desktop session)" };
  return { kind: "browser", reason: `a terminal and ${browser}` };
}
