/** Binds a pending authorization request to the browser that started it: a random nonce in an HttpOnly cookie. */
import type { Request, Response } from "express";
import { newSecret, sameSecret } from "../ids.js";
import { readCookie } from "../sessions.js";

/** One cookie per pending request (`<prefix><request id>`), so sign-ins started in parallel do not evict each other. */
export const CONSENT_BINDING_COOKIE_PREFIX = "chat_ref_authz_";

export class ConsentBrowserBinding {
  constructor(
    /** Cookies get `Secure` when the server's base URL is https. */
    private readonly secureCookies: () => boolean,
    /** Lifetime of the cookie: that of the pending request it binds. */
    private readonly maxAgeMs: number,
  ) {}

  /** Sets the binding cookie on the `/authorize` response; returns the nonce to keep with the pending request. */
  bind(res: Response, requestId: string): string {
    const nonce = newSecret();
    res.cookie(cookieName(requestId), nonce, { ...this.#cookieOptions(), maxAge: this.maxAgeMs });
    return nonce;
  }

  /** True when the browser presents the nonce of this pending request. */
  presentedBy(req: Request, requestId: string, nonce: string): boolean {
    const presented = readCookie(req, cookieName(requestId));
    return presented !== undefined && sameSecret(nonce, presented);
  }

  /** Clears the cookie once the request is decided. */
  release(res: Response, requestId: string): void {
    res.clearCookie(cookieName(requestId), this.#cookieOptions());
  }

  #cookieOptions() {
    // Path `/`: the sign-in hop (`/signin?next=<consent page>`) checks it too.
    return { httpOnly: true, sameSite: "lax" as const, secure: this.secureCookies(), path: "/" };
  }
}

function cookieName(requestId: string): string {
  return `${CONSENT_BINDING_COOKIE_PREFIX}${requestId}`;
}
