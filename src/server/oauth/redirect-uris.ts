/** Which redirect URIs a client may register and use: https, loopback http (RFC 8252) or a private-use scheme. */

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
/** Schemes that can never receive a code for a client: local files, script and browser-internal pages. */
const FORBIDDEN_SCHEMES = new Set([
  "file:",
  "javascript:",
  "data:",
  "vbscript:",
  "about:",
  "blob:",
  "chrome:",
  "chrome-extension:",
  "edge:",
  "view-source:",
  "ftp:",
  "ws:",
  "wss:",
]);

/** Why `uri` is not an acceptable redirect URI, or null when it is (RFC 6749 §3.1.2, OAuth 2.1 §2.3.1, RFC 8252 §7). */
export function redirectUriProblem(uri: string): string | null {
  if (!URL.canParse(uri)) return "is not an absolute URL";
  if (uri.includes("#")) return "must not contain a fragment";
  const url = new URL(uri);
  if (url.username || url.password) return "must not contain user information";
  if (FORBIDDEN_SCHEMES.has(url.protocol))
    return `uses the ${url.protocol} scheme, which cannot receive a code`;
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:") {
    return LOOPBACK_HOSTS.has(url.hostname) ? null : "uses plain http on a host that is not loopback";
  }
  // RFC 8252 §7.1: private-use schemes are in reverse-domain form (e.g. com.example.app:/callback).
  return /^[a-z][a-z0-9+-]*\.[a-z0-9+.-]+:$/i.test(url.protocol)
    ? null
    : `uses the unknown scheme ${url.protocol}`;
}

/**
 * True when `requested` is one of `registered`: exactly, or for a loopback http URI on any port (RFC 8252 §7.3,
 * native apps bind whatever port is free), with scheme, host, path and query equal.
 */
export function redirectUriRegistered(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  if (!URL.canParse(requested)) return false;
  const wanted = new URL(requested);
  if (wanted.protocol !== "http:" || !LOOPBACK_HOSTS.has(wanted.hostname)) return false;
  return registered.some((uri) => {
    if (!URL.canParse(uri)) return false;
    const known = new URL(uri);
    known.port = "";
    const candidate = new URL(wanted.href);
    candidate.port = "";
    return known.href === candidate.href;
  });
}
