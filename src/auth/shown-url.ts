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
 * Checks a URL from outside before anyone sees it: a valid http(s) URL with a host, no user name or password
 * (`https://chat.example.com@evil.example/` reads as the first host and goes to the second), and no control, bidi,
 * zero-width or other invisible character anywhere in it (a raw U+202E can make the address read backwards; a raw
 * newline can forge a second line), and a host of the letters a domain name or IP address has (no quote or backtick
 * to close the text around it). Its `site` is bounded (a long one is shown by its end). Returns the parser's `href`, the one form to show and send. Throws
 * `UnsafeUrlError` naming `what` and the rule it broke. Call it for every URL the bridge or `chat-cli` puts in an
 * elicitation, a tool error's text, `notifications/message` or stderr, and before a browser opens one.
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
