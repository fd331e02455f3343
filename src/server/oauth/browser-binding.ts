/** Binds a pending authorization request to the browser that started it: a random nonce in an HttpOnly cookie. */

import { clearCookie, readRequestCookie, serializeCookie } from "../http.js";
import { newSecret, sameSecret } from "../ids.js";

/** One cookie per pending request (`<prefix><request id>`), so sign-ins started in parallel do not evict each other. */
export const CONSENT_BINDING_COOKIE_PREFIX = "chat_ref_authz_";

export class ConsentBrowserBinding {
  constructor(
    /** Cookies get `Secure` when the server's base URL is https. */
    private readonly secureCookies: () => boolean,
    /** Lifetime of the cookie: that of the pending request it binds. */
    private readonly maxAgeMs: number,
  ) {}

  /** A fresh nonce for a pending request and the `Set-Cookie` value that hands it to the browser. */
  bind(requestId: string): { nonce: string; setCookie: string } {
    const nonce = newSecret();
    return {
      nonce,
      setCookie: serializeCookie(cookieName(requestId), nonce, {
        ...this.#cookieOptions(),
        maxAgeMs: this.maxAgeMs,
      }),
    };
  }

  /** True when the browser presents the nonce of this pending request. */
  presentedBy(request: Request, requestId: string, nonce: string): boolean {
    const presented = readRequestCookie(request, cookieName(requestId));
    return presented !== undefined && sameSecret(nonce, presented);
  }

  /** The `Set-Cookie` value that clears the cookie once the request is decided. */
  release(requestId: string): string {
    return clearCookie(cookieName(requestId), this.#cookieOptions());
  }

  #cookieOptions() {
    // Path `/`: the sign-in hop (`/signin?next=<consent page>`) checks it too.
    return { httpOnly: true, sameSite: "lax" as const, secure: this.secureCookies(), path: "/" };
  }
}

function cookieName(requestId: string): string {
  return `${CONSENT_BINDING_COOKIE_PREFIX}${requestId}`;
}
