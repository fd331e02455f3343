/** The headless Chromium the browser tests drive (Debian's, through playwright-core): where it is, why it is missing, and one way to start it. */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's chromium, or any Chromium or Chrome binary named by CHAT_TEST_CHROMIUM. */
export const CHROMIUM = process.env.CHAT_TEST_CHROMIUM || "/usr/bin/chromium";

/** Why the browser tests cannot run here (for `needs("chromium", ...)`), or undefined when Chromium is installed. */
export const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is not installed (apt-get install chromium, or set CHAT_TEST_CHROMIUM to a Chromium binary)`;

/** Starts headless Chromium with nothing of its own on the network (no updates, sync or QUIC probes). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-quic",
      "--no-first-run",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
