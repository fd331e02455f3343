/** A person at a real headless Chromium: opens the sign-in link the bridge handed to `$BROWSER`, signs in as dev/dev, approves a team. */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import { launchChromium } from "../support/chromium.js";

export { chromiumMissing } from "../support/chromium.js";

/** A `$BROWSER` that appends the URL to `$HAND_URL_FILE` for the person below (test/browser's fixture). */
const HAND_URL_BROWSER = resolve(import.meta.dirname, "../browser/fixtures/hand-url-browser.mjs");

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The `$BROWSER` environment of one host's bridge: its opened links land in `<dir>/opened-urls.txt`. */
export function browserEnv(dir: string): { env: Record<string, string>; urlFile: string } {
  const urlFile = join(dir, "opened-urls.txt");
  writeFileSync(urlFile, "");
  return { env: { BROWSER: `"${process.execPath}" "${HAND_URL_BROWSER}"`, HAND_URL_FILE: urlFile }, urlFile };
}

/** The first link written to `urlFile`, polled; rejects after `timeoutMs` (the bridge never opened a browser). */
export async function openedUrl(urlFile: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const first = readFileSync(urlFile, "utf8").split("\n")[0];
    if (first) return first;
    await sleep(100);
  }
  throw new Error(`no sign-in link was opened within ${timeoutMs / 1000} s`);
}

/** When the link was seen and when the callback page showed (epoch ms), for the report of each host's times. */
export interface Approval {
  linkSeenAt: number;
  approvedAt: number;
}

export interface Person {
  /**
   * Waits for the link, lets `thinkMs` pass (a person reading, typing a password, a second factor), then signs in
   * as dev/dev and approves `team` in Chromium, resolving once the loopback callback's page is shown.
   */
  approve(
    urlFile: string,
    options: { thinkMs: number; team?: string; before?: Promise<unknown> },
  ): Promise<Approval>;
  close(): Promise<void>;
}

/** One headless Chromium for a test file; each approval gets its own browser context (its own cookies). */
export async function startPerson(): Promise<Person> {
  const browser: Browser = await launchChromium();
  return {
    async approve(urlFile, { thinkMs, team = "acme", before }) {
      const url = await openedUrl(urlFile);
      const linkSeenAt = Date.now();
      await before;
      await sleep(thinkMs);
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(30_000);
        await page.goto(url);
        if (await page.locator('input[name="password"]').count()) {
          await page.fill('input[name="username"]', "dev");
          await page.fill('input[name="password"]', "dev");
          await Promise.all([page.waitForURL(/\/oauth\/consent/), page.click('button[type="submit"]')]);
        }
        await page.check(`input[name="account"][value="${team}"]`);
        await Promise.all([
          page.waitForURL((next) => next.hostname === "127.0.0.1" && !next.pathname.startsWith("/oauth")),
          page.click('button[name="decision"][value="approve"]'),
        ]);
      } finally {
        await context.close();
      }
      return { linkSeenAt, approvedAt: Date.now() };
    },
    close: () => browser.close(),
  };
}
