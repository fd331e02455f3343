/** The one check of every URL the package shows a person (a dialog, a tool error, a log message, stderr) or hands a browser: http(s), no user info, nothing hidden. */
import { hasHiddenCharacters } from "../internal/redact.js";
import { UnsafeUrlError } from "./errors.js";

/** A host as DNS and IP addresses spell it (the parser already wrote an IDN as punycode), and its port. */
const SITE = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::\d+)?$/;
/** The most of a site shown: a longer one is shown by its end, the part that says whose it is. */
const MAX_SITE_CHARS = 64;

/** A URL that passed the check: its normalised `href` (what is shown and sent) and the `site` it leads to. */
export interface ShownUrl {
  href: string;
  /** The host (and port) the URL leads to, as the URL parser reads it (IDNs in their ASCII form). */
  site: string;
}

/**
 * Checks a URL from outside before anyone sees it (an elicitation, a tool error, `notifications/message`, stderr)
 * or a browser opens it: http(s) with a host of a domain name's or IP address's letters (no quote to close the text
 * around it), no user info (`https://chat.example.com@evil.example/` goes to the second host), no control, bidi or
 * invisible character (a raw U+202E reads backwards, a newline forges a line). Throws `UnsafeUrlError` naming `what`.
 */
export function checkShownUrl(url: string, what = "URL"): ShownUrl {
  if (/\s/u.test(url) || hasHiddenCharacters(url)) {
    throw new UnsafeUrlError(
      `Refusing the ${what}: it contains spaces, control characters or invisible characters.`,
    );
  }
  const parsed = URL.parse(url);
  if (!parsed) throw new UnsafeUrlError(`Refusing the ${what}: it is not a valid URL.`);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UnsafeUrlError(
      `Refusing the ${what}: only http and https URLs are shown or opened, not ${parsed.protocol}`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new UnsafeUrlError(`Refusing the ${what}: it has a user name or password in it.`);
  }
  if (!parsed.hostname) throw new UnsafeUrlError(`Refusing the ${what}: it has no host.`);
  // The parser lets quotes, backticks and the like into a host: no name DNS resolves has them.
  if (!SITE.test(parsed.host))
    throw new UnsafeUrlError(`Refusing the ${what}: its host is not a domain name or an IP address.`);
  const site =
    parsed.host.length > MAX_SITE_CHARS ? `…${parsed.host.slice(-(MAX_SITE_CHARS - 1))}` : parsed.host;
  return { href: parsed.href, site };
}
