/** Opens a URL from chat-cli (`--web`, `--open`, SSO links): http(s) only, via the shared opener that honours $BROWSER. */
import { CliError } from "./errors.js";
import type { CliIo } from "./io.js";

export function isWebUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

/** Prints "Opening <url>" on stderr and hands the URL to the browser; refuses anything but http(s). */
export async function openInBrowser(io: CliIo, url: string): Promise<void> {
  if (!isWebUrl(url)) throw new CliError(`refusing to open ${JSON.stringify(url)}: not an http(s) URL`);
  io.stderr(`Opening ${url}\n`);
  const { openUrl } = await import("../auth/index.js");
  await openUrl(url);
}
