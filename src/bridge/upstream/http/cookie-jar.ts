/** The upstream's cookie jar (on unless `--disable-cookies`): what a server sets comes back to that origin only, so load balancers' sticky sessions hold. */
import { rememberSecret } from "../../../internal/redact.js";
import type { HttpExchange } from "./http-exchange.js";

/** A sticky session needs a cookie or two; a server that sets more gets its oldest dropped. */
export const MAX_COOKIES = 50;
/** Name and value together, as browsers bound them (RFC 6265 §6.1 asks for at least 4096). */
export const MAX_COOKIE_BYTES = 4096;
/** Set-Cookie lines read from one answer; the rest are ignored. */
const MAX_SET_COOKIES_PER_ANSWER = 50;

interface Cookie {
  name: string;
  value: string;
  path: string;
  /** Milliseconds since the epoch; absent: until the process ends. */
  expiresAt?: number;
}

const NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 6265 cookie-octets, optionally quoted: no controls, whitespace, `"`, `,`, `;` or `\`. */
const VALUE =
  /^(?:"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"|[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*)$/;
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Cookies by origin (scheme, host and port): a cookie goes back only to the origin that set it, even when its
 * `Domain` would let a browser send it to sibling hosts. `Path`, `Secure`, `Max-Age`, `Expires` and the
 * `__Host-`/`__Secure-` prefixes are honoured; `HttpOnly` and `SameSite` mean nothing without scripts or pages.
 */
export class CookieJar {
  /** origin -> `name;path` -> cookie, in the order set (the oldest first out). */
  readonly #byOrigin = new Map<string, Map<string, Cookie>>();
  #count = 0;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Takes the `Set-Cookie` lines of an answer from `url`; malformed or out-of-bounds ones are dropped. */
  capture(url: URL, setCookies: readonly string[]): void {
    for (const line of setCookies.slice(0, MAX_SET_COOKIES_PER_ANSWER)) {
      const parsed = parseSetCookie(line, url, this.#now());
      if (!parsed) continue;
      const jar = this.#byOrigin.get(url.origin) ?? new Map<string, Cookie>();
      this.#byOrigin.set(url.origin, jar);
      const key = `${parsed.cookie.name};${parsed.cookie.path}`;
      if (jar.delete(key)) this.#count--;
      if (parsed.expired) continue;
      rememberSecret(parsed.cookie.value); // never in a log line, --debug included
      jar.set(key, parsed.cookie);
      this.#count++;
      if (this.#count > MAX_COOKIES) this.#dropOldest();
    }
  }

  /** The `Cookie` header for a request to `url`, or undefined when no cookie applies. */
  header(url: URL): string | undefined {
    const jar = this.#byOrigin.get(url.origin);
    if (!jar) return undefined;
    const now = this.#now();
    const pairs: string[] = [];
    for (const [key, cookie] of jar) {
      if (cookie.expiresAt !== undefined && cookie.expiresAt <= now) {
        jar.delete(key);
        this.#count--;
      } else if (pathMatches(url.pathname, cookie.path)) pairs.push(`${cookie.name}=${cookie.value}`);
    }
    return pairs.length > 0 ? pairs.join("; ") : undefined;
  }

  #dropOldest(): void {
    for (const jar of this.#byOrigin.values()) {
      const oldest = jar.keys().next();
      if (!oldest.done) {
        jar.delete(oldest.value);
        this.#count--;
        return;
      }
    }
  }
}

/** `exchange` that sends the jar's cookies for each URL and keeps the ones each answer sets. */
export function withCookieJar(exchange: HttpExchange, jar: CookieJar): HttpExchange {
  return async (url, request) => {
    const cookie = jar.header(url);
    const answer = await exchange(
      url,
      cookie ? { ...request, headers: { ...request.headers, cookie } } : request,
    );
    const setCookies = answer.headers.getSetCookie?.() ?? [];
    if (setCookies.length > 0) jar.capture(url, setCookies);
    return answer;
  };
}

function parseSetCookie(
  line: string,
  url: URL,
  now: number,
): { cookie: Cookie; expired: boolean } | undefined {
  const [pair = "", ...attributes] = line.split(";");
  const equals = pair.indexOf("=");
  if (equals <= 0) return undefined;
  const name = pair.slice(0, equals).trim();
  const value = pair.slice(equals + 1).trim();
  if (!NAME.test(name) || !VALUE.test(value) || name.length + value.length > MAX_COOKIE_BYTES)
    return undefined;
  let path: string | undefined;
  let domain: string | undefined;
  let secure = false;
  let maxAge: number | undefined;
  let expires: number | undefined;
  for (const attribute of attributes) {
    const at = attribute.indexOf("=");
    const key = (at < 0 ? attribute : attribute.slice(0, at)).trim().toLowerCase();
    const raw = at < 0 ? "" : attribute.slice(at + 1).trim();
    if (key === "path" && raw.startsWith("/")) path = raw;
    else if (key === "domain" && raw) domain = raw.replace(/^\./, "").toLowerCase();
    else if (key === "secure") secure = true;
    else if (key === "max-age" && /^-?\d{1,12}$/.test(raw)) maxAge = Number(raw);
    else if (key === "expires") {
      const date = Date.parse(raw);
      if (Number.isFinite(date)) expires = date;
    }
  }
  const host = url.hostname.toLowerCase();
  // A Domain must be this host or one it is under (never a bare top-level name, never for an IP address).
  if (
    domain !== undefined &&
    !(domain === host || (domain.includes(".") && host.endsWith(`.${domain}`) && !/^[\d.]+$|:/.test(host)))
  )
    return undefined;
  if (secure && url.protocol !== "https:" && !LOOPBACK.has(url.hostname)) return undefined;
  if (name.startsWith("__Secure-") && !secure) return undefined;
  if (name.startsWith("__Host-") && (!secure || path !== "/" || domain !== undefined)) return undefined;
  const expiresAt = maxAge !== undefined ? now + maxAge * 1000 : expires;
  return {
    cookie: {
      name,
      value,
      path: path ?? defaultPath(url.pathname),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    },
    expired: expiresAt !== undefined && expiresAt <= now,
  };
}

/** RFC 6265 §5.1.4: the request path up to its last `/`, or `/`. */
function defaultPath(requestPath: string): string {
  const last = requestPath.lastIndexOf("/");
  return last <= 0 ? "/" : requestPath.slice(0, last);
}

/** RFC 6265 §5.1.4 path-match. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}
