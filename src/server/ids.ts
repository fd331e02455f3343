/** Prefixed random ids and secrets (base64url, so they match the wire IdSchema). */
import { randomBytes, timingSafeEqual } from "node:crypto";

/** `chat_3kq...`: a prefix naming what the id is, then 120 random bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(15).toString("base64url")}`;
}

/** An unguessable secret (256 bits) for API keys, session cookies, tickets and CSRF tokens. */
export function newSecret(prefix = ""): string {
  return `${prefix}${randomBytes(32).toString("base64url")}`;
}

/** Constant-time string equality for secrets. */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
