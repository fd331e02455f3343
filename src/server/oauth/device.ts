/** The device authorization grant's state (RFC 8628), in memory: device and user codes, the person's decision, the polling pace, one redemption each; bounded in number and lifetime. */
import { randomInt } from "node:crypto";
import { newSecret } from "../ids.js";
import type { DeviceAuthorizationOptions as DeviceOptions } from "../options.js";
import { type RateDecision, TokenBucketLimiter } from "../rate-limit.js";
import { type Approval, hashOf, OAuthError, type OAuthGrants, type TokenResponseBody } from "./grants.js";

/** RFC 8628 §3.5: each `slow_down` adds this to the interval, for that poll and all later ones. */
const SLOW_DOWN_STEP_SECONDS = 5;
/** RFC 8628 §6.1: twenty consonants, so no word can be spelled and nothing reads as another character. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const letter = () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)] as string;
/** A poll this much early still counts as on time: network delays can bunch two polls together. */
const POLL_TOLERANCE_MS = 500;
const USER_CODE_ATTEMPT_WINDOW_SECONDS = 15 * 60;

export interface DeviceAuthorizationOptions extends DeviceOptions {
  grants: OAuthGrants;
  now: () => number;
}

/** A device authorization, keyed by its device code's hash (so it holds no device code). */
interface DeviceAuthorization {
  userCode: string;
  clientId: string;
  scopes: string[];
  resource?: string;
  expiresAt: number;
  intervalMs: number;
  lastPolledAt?: number;
  decision?: { approved: Approval } | { denied: true };
  /** The family its redemption started; a second redemption revokes it, as a replayed code does. */
  redeemedFamilyId?: string;
}

export class DeviceAuthorizations {
  /** Keyed by the SHA-256 of the device code, never the code itself. */
  readonly #byDeviceCode = new Map<string, DeviceAuthorization>();
  readonly #byUserCode = new Map<string, DeviceAuthorization>();
  readonly #options: DeviceAuthorizationOptions;
  readonly #lifetimeMs: number;
  readonly #intervalSeconds: number;
  /** Code entries per (address, browser session) (RFC 8628 §5.1: guessing user codes is the attack on the page). */
  readonly #attempts: TokenBucketLimiter;

  constructor(options: DeviceAuthorizationOptions) {
    this.#options = options;
    this.#lifetimeMs = (options.lifetimeSeconds ?? 600) * 1000;
    this.#intervalSeconds = options.intervalSeconds ?? 5;
    const attempts = options.maxUserCodeAttempts ?? 10;
    this.#attempts = new TokenBucketLimiter(
      { capacity: attempts, refillPerSecond: attempts / USER_CODE_ATTEMPT_WINDOW_SECONDS },
      options.now,
    );
  }

  /**
   * One code entry by this browser session from this address: refused once it has entered the most codes the
   * window allows (right or wrong: a guesser cannot tell which until the answer). Another browser at the address
   * (an office behind one NAT, who all sign in as one seeded person) is not held; guessing across sessions is
   * bounded by the page's per-address limit (SECURITY.md has the numbers).
   */
  attemptEntry(session: string, clientIp: string): RateDecision {
    return this.#attempts.take(`${clientIp}\u0000${session}`);
  }

  /** A new authorization for the client; at the cap the oldest one is forgotten (its device then hears `invalid_grant`). */
  start(request: { clientId: string; scopes: string[]; resource?: string }) {
    const now = this.#options.now();
    // Forgotten a lifetime past their expiry (until then a late poll still hears `expired_token`).
    for (const [hash, authorization] of this.#byDeviceCode)
      if (authorization.expiresAt + this.#lifetimeMs <= now) this.#forget(hash, authorization);
    for (const [hash, oldest] of this.#byDeviceCode) {
      if (this.#byDeviceCode.size < (this.#options.maxPending ?? 1000)) break;
      this.#forget(hash, oldest);
    }
    const deviceCode = newSecret("chat_dc_");
    let userCode = "";
    while (!userCode || this.#byUserCode.has(userCode)) userCode = Array.from({ length: 8 }, letter).join("");
    const expiresAt = now + this.#lifetimeMs;
    const authorization = { ...request, userCode, expiresAt, intervalMs: this.#intervalSeconds * 1000 };
    this.#byDeviceCode.set(hashOf(deviceCode), authorization);
    this.#byUserCode.set(userCode, authorization);
    const expiresIn = Math.round(this.#lifetimeMs / 1000);
    return { deviceCode, userCode: formatUserCode(userCode), expiresIn, interval: this.#intervalSeconds };
  }

  /** The live, undecided authorization of a code a person typed (any case, dashes and spaces ignored). */
  pending(typedUserCode: string): DeviceAuthorization | undefined {
    const authorization = this.#byUserCode.get(normalizeUserCode(typedUserCode));
    const live = authorization && !authorization.decision && authorization.expiresAt > this.#options.now();
    return live ? authorization : undefined;
  }

  /** Records the person's approval, or refusal without one; false when the code is no longer pending. */
  decide(userCode: string, approved?: Approval): boolean {
    const authorization = this.pending(userCode);
    if (!authorization) return false;
    authorization.decision = approved ? { approved } : { denied: true };
    return true;
  }

  /**
   * The token endpoint's device code grant (RFC 8628 §3.4, §3.5): tokens once approved, else the RFC's error for
   * where the authorization stands.
   */
  redeem(clientId: string, form: URLSearchParams): TokenResponseBody {
    const deviceCode = form.get("device_code");
    if (!deviceCode) throw new OAuthError("invalid_request", "device_code is required");
    const asked = form.get("resource");
    const resource = asked ? this.#options.grants.ourResource(asked) : undefined;
    const hash = hashOf(deviceCode);
    const authorization = this.#byDeviceCode.get(hash);
    if (!authorization) throw new OAuthError("invalid_grant", "device_code is invalid");
    if (authorization.clientId !== clientId)
      throw new OAuthError("invalid_grant", "device_code was issued to another client");
    if (authorization.redeemedFamilyId) {
      this.#options.grants.revokeFamily(authorization.redeemedFamilyId);
      throw new OAuthError(
        "invalid_grant",
        "device_code was already used; the tokens issued for it are revoked",
      );
    }
    const now = this.#options.now();
    const { decision } = authorization;
    const expired = authorization.expiresAt <= now;
    if (expired || (decision && "denied" in decision)) {
      this.#forget(hash, authorization);
      if (expired) throw new OAuthError("expired_token", "device_code has expired; start the sign-in again");
      throw new OAuthError("access_denied", "The user denied the authorization request");
    }
    if (!decision) {
      const early =
        authorization.lastPolledAt !== undefined &&
        now - authorization.lastPolledAt < authorization.intervalMs - POLL_TOLERANCE_MS;
      authorization.lastPolledAt = now;
      if (!early) throw new OAuthError("authorization_pending", "The user has not approved the request yet");
      authorization.intervalMs += SLOW_DOWN_STEP_SECONDS * 1000;
      const seconds = authorization.intervalMs / 1000;
      throw new OAuthError(
        "slow_down",
        `polled faster than every ${seconds - SLOW_DOWN_STEP_SECONDS} s; poll every ${seconds} s from now on`,
      );
    }
    const { approved } = decision;
    if (resource && approved.resource && resource !== approved.resource)
      throw new OAuthError("invalid_target", "resource does not match the device authorization request");
    const bound = approved.resource ?? resource;
    const tokens = this.#options.grants.issue({ ...approved, ...(bound ? { resource: bound } : {}) });
    authorization.redeemedFamilyId = tokens.familyId;
    return tokens.body;
  }

  #forget(hash: string, authorization: DeviceAuthorization): void {
    this.#byDeviceCode.delete(hash);
    if (this.#byUserCode.get(authorization.userCode) === authorization)
      this.#byUserCode.delete(authorization.userCode);
  }
}

/** `BCDFGHJK` as people read it: `BCDF-GHJK`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** A typed user code as stored: upper case, letters only (RFC 8628 §6.1: forgive case and punctuation). */
export function normalizeUserCode(typed: string): string {
  return typed
    .slice(0, 64)
    .toUpperCase()
    .replace(/[^A-Z]/g, "");
}
