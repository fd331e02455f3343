/** The upstream's cookie jar (on unless `--disable-cookies`): what a server sets comes back to that origin only, so load balancers' sticky sessions hold. */
import type { CookieJar as ToughCookieJar } from "tough-cookie";
import { rememberSecret } from "../../../internal/redact.js";
import type { HttpExchange } from "./http-exchange.js";

/** A sticky session needs a cookie or two; a server that sets more gets its oldest dropped. */
export const MAX_COOKIES = 50;
/** Name and value together, as browsers bound them (RFC 6265 §6.1 asks for at least 4096). */
export const MAX_COOKIE_BYTES = 4096;
/** Set-Cookie lines read from one answer; the rest are ignored. */
const MAX_SET_COOKIES_PER_ANSWER = 50;
/** RFC 6265bis §5.6 refuses a line with a control character (tab aside); tough-cookie would cut it at a NUL and keep the rest. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** tough-cookie (vendored, dist/vendor), loaded when a server first sets a cookie: most never do. */
let toughCookie: Promise<typeof import("tough-cookie")> | undefined;

/**
 * RFC 6265 as tough-cookie reads it, one jar per origin: a cookie goes back only to the origin that set it, whatever
 * its `Domain`. Bounded here, since tough-cookie's store is not: MAX_COOKIES in all, the oldest dropped first.
 */
export class CookieJar {
  readonly #byOrigin = new Map<string, ToughCookieJar>();

  /** Takes the `Set-Cookie` lines of an answer from `url`; malformed or out-of-bounds ones are dropped. */
  async capture(url: URL, setCookies: readonly string[]): Promise<void> {
    const lines = setCookies
      .slice(0, MAX_SET_COOKIES_PER_ANSWER)
      .filter(
        (line) => !CONTROL.test(line) && (line.split(";")[0] ?? "").trim().length <= MAX_COOKIE_BYTES + 1,
      );
    if (lines.length === 0) return;
    toughCookie ??= import("tough-cookie");
    const { CookieJar: Jar } = await toughCookie;
    let jar = this.#byOrigin.get(url.origin);
    if (!jar) {
      jar = new Jar(undefined, {
        rejectPublicSuffixes: true,
        prefixSecurity: "silent",
        allowSecureOnLocal: true,
      });
      this.#byOrigin.set(url.origin, jar);
    }
    for (const line of lines) {
      const cookie = jar.setCookieSync(line, url.href, { ignoreError: true });
      if (cookie) rememberSecret(cookie.value); // never in a log line, --debug included
    }
    await this.#dropOldest();
  }

  header(url: URL): string | undefined {
    return this.#byOrigin.get(url.origin)?.getCookieStringSync(url.href) || undefined;
  }

  async #dropOldest(): Promise<void> {
    const all = [];
    for (const jar of this.#byOrigin.values())
      for (const cookie of await jar.store.getAllCookies()) all.push({ jar, cookie });
    all.sort((a, b) => a.cookie.creationIndex - b.cookie.creationIndex);
    for (const { jar, cookie } of all.slice(0, Math.max(0, all.length - MAX_COOKIES)))
      await jar.store.removeCookie(cookie.domain, cookie.path, cookie.key);
  }
}

export function withCookieJar(exchange: HttpExchange, jar: CookieJar): HttpExchange {
  return async (url, request) => {
    const cookie = jar.header(url);
    const answer = await exchange(
      url,
      cookie ? { ...request, headers: { ...request.headers, cookie } } : request,
    );
    const setCookies = answer.headers.getSetCookie?.() ?? [];
    if (setCookies.length > 0) await jar.capture(url, setCookies);
    return answer;
  };
}
