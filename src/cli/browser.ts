/** Opens a URL from chat-cli (`--web`, `--open`, SSO links): http(s) only, via the shared opener that honours $BROWSER. */
import { sanitizeForTerminal } from "../internal/redact.js";
import { CliError, EXIT } from "./errors.js";
import type { CliIo } from "./io.js";

export function isWebUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

/** How long an opener has to fail (xdg-open with no browser exits within milliseconds) before it counts as opened. */
const OPENER_CONFIRM_MS = 1500;

/**
 * Prints "Opening <url>" on stderr and hands the URL to the browser; refuses anything but http(s). When no browser
 * could open it, fails (exit 1) saying so, with the URL to open by hand: as gh does, a command asked to open
 * something does not report success for nothing, and scripts can tell.
 */
export async function openInBrowser(io: CliIo, url: string): Promise<void> {
  if (!isWebUrl(url)) throw new CliError(`refusing to open ${JSON.stringify(url)}: not an http(s) URL`);
  io.stderr(`Opening ${sanitizeForTerminal(url, { oneLine: true })}\n`);
  const { openUrl } = await import("../auth/index.js");
  try {
    await openUrl(url, { confirmMs: OPENER_CONFIRM_MS });
  } catch (error) {
    throw new CliError(
      `could not open a browser: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.error,
      `Open the URL yourself: ${url}`,
      error,
    );
  }
}
