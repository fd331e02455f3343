/** Browser sign-in sessions of the reference server's pages: HttpOnly SameSite=Lax cookie, per-session CSRF token. */
import type { BrowserSessions, CookieSource, User } from "./context.js";
import { type CookieOptions, clearCookie, readCookie, serializeCookie } from "./http.js";
import { newSecret, sameSecret } from "./ids.js";

export const SESSION_COOKIE = "chat_ref_session";
/** Double-submit token of the sign-in form, before there is a session. */
export const SIGNIN_CSRF_COOKIE = "chat_ref_signin";
const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

interface Session {
  userId: string;
  csrf: string;
  expiresAt: number;
}

export class CookieSessions implements BrowserSessions {
  /** Sessions live in memory: a restart signs everyone out, which is fine for a dev server. */
  readonly #sessions = new Map<string, Session>();

  constructor(
    private readonly users: ReadonlyMap<string, User>,
    private readonly secureCookies: () => boolean,
  ) {}

  userFor(req: CookieSource): User | null {
    const session = this.#sessionOf(req);
    return session ? (this.users.get(session.userId) ?? null) : null;
  }

  signInUrl(next: string): string {
    return `/signin?next=${encodeURIComponent(safeNextPath(next))}`;
  }

  csrfToken(req: CookieSource): string | null {
    return this.#sessionOf(req)?.csrf ?? null;
  }

  verifyCsrf(req: CookieSource, token: unknown): boolean {
    const expected = this.csrfToken(req);
    return typeof token === "string" && expected !== null && sameSecret(expected, token);
  }

  /** The user whose password matches, or null. */
  checkPassword(username: unknown, password: unknown): User | null {
    if (typeof username !== "string" || typeof password !== "string") return null;
    const user = this.users.get(username);
    return user && sameSecret(user.password, password) ? user : null;
  }

  /**
   * Starts a fresh session (a new id, so a planted cookie cannot be fixed onto the person); the `Set-Cookie`
   * value to send.
   */
  signIn(req: CookieSource, user: User): string {
    this.#forget(req);
    const id = newSecret();
    this.#sessions.set(id, { userId: user.id, csrf: newSecret(), expiresAt: Date.now() + SESSION_TTL_MS });
    return serializeCookie(SESSION_COOKIE, id, this.cookieOptions(SESSION_TTL_MS));
  }

  /** Ends the request's session; the `Set-Cookie` value that removes the cookie. */
  signOut(req: CookieSource): string {
    this.#forget(req);
    return clearCookie(SESSION_COOKIE, this.cookieOptions());
  }

  cookieOptions(maxAgeMs?: number): CookieOptions {
    return {
      httpOnly: true,
      sameSite: "lax",
      secure: this.secureCookies(),
      path: "/",
      ...(maxAgeMs ? { maxAgeMs } : {}),
    };
  }

  #forget(req: CookieSource): void {
    const id = readCookie(req, SESSION_COOKIE);
    if (id) this.#sessions.delete(id);
  }

  #sessionOf(req: CookieSource): Session | null {
    const id = readCookie(req, SESSION_COOKIE);
    if (!id) return null;
    const session = this.#sessions.get(id);
    if (!session) return null;
    if (session.expiresAt <= Date.now()) {
      this.#sessions.delete(id);
      return null;
    }
    return session;
  }
}

/** `next` limited to a path of this origin: `/x?y`, never `//host`, `/\host` or an absolute URL. */
export function safeNextPath(next: unknown): string {
  if (typeof next !== "string" || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\"))
    return "/";
  if (/[\x00-\x1f\\]/.test(next)) return "/";
  return next;
}
