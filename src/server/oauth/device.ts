/** The device authorization grant's state (RFC 8628), in memory: device and user codes, the person's decision, the polling pace, one redemption each; bounded in number and lifetime. */
import { createHash, randomInt } from "node:crypto";
import { newSecret } from "../ids.js";
import { type RateDecision, TokenBucketLimiter } from "../rate-limit.js";
import { type Approval, type IssuedTokens, OAuthError, type OAuthGrants } from "./grants.js";

export const DEFAULT_DEVICE_CODE_LIFETIME_SECONDS = 600;
export const DEFAULT_DEVICE_POLL_INTERVAL_SECONDS = 5;
export const DEFAULT_MAX_PENDING_DEVICE_AUTHORIZATIONS = 1000;
/** RFC 8628 §3.5: each `slow_down` adds this to the interval, for that poll and all later ones. */
export const SLOW_DOWN_STEP_SECONDS = 5;
/** RFC 8628 §6.1: twenty consonants, so no word can be spelled and nothing reads as another character. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LENGTH = 8;
/** A poll this much early still counts as on time: network delays can bunch two polls together. */
const POLL_TOLERANCE_MS = 500;
/** Code entries on the verification page per browser session at an address, given back over this window. */
export const DEFAULT_MAX_USER_CODE_ATTEMPTS = 10;
const USER_CODE_ATTEMPT_WINDOW_SECONDS = 15 * 60;

export interface DeviceAuthorizationOptions {
  grants: OAuthGrants;
  now: () => number;
  lifetimeSeconds?: number;
  intervalSeconds?: number;
  maxPending?: number;
  maxUserCodeAttempts?: number;
}

/** What the device authorization endpoint answers about a new authorization (RFC 8628 §3.2, less the URIs). */
export interface StartedDeviceAuthorization {
  deviceCode: string;
  /** As shown to the person: `XXXX-XXXX`. */
  userCode: string;
  expiresIn: number;
  interval: number;
}

/** What the verification page may know of a pending authorization: never its device code. */
export interface PendingDeviceAuthorization {
  userCode: string;
  clientId: string;
  scopes: string[];
  resource?: string;
  expiresAt: number;
}

interface DeviceAuthorization extends PendingDeviceAuthorization {
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
  readonly #grants: OAuthGrants;
  readonly #now: () => number;
  readonly #lifetimeMs: number;
  readonly #intervalSeconds: number;
  readonly #maxPending: number;
  /** Code entries per (address, browser session) (RFC 8628 §5.1: guessing user codes is the attack on the page). */
  readonly #attempts: TokenBucketLimiter;

  constructor(options: DeviceAuthorizationOptions) {
    this.#grants = options.grants;
    this.#now = options.now;
    this.#lifetimeMs = (options.lifetimeSeconds ?? DEFAULT_DEVICE_CODE_LIFETIME_SECONDS) * 1000;
    this.#intervalSeconds = options.intervalSeconds ?? DEFAULT_DEVICE_POLL_INTERVAL_SECONDS;
    this.#maxPending = options.maxPending ?? DEFAULT_MAX_PENDING_DEVICE_AUTHORIZATIONS;
    const attempts = options.maxUserCodeAttempts ?? DEFAULT_MAX_USER_CODE_ATTEMPTS;
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
  start(request: { clientId: string; scopes: string[]; resource?: string }): StartedDeviceAuthorization {
    this.#prune();
    while (this.#byDeviceCode.size >= this.#maxPending) {
      const oldest = this.#byDeviceCode.entries().next().value;
      if (!oldest) break;
      this.#forget(oldest[0], oldest[1]);
    }
    const deviceCode = newSecret("chat_dc_");
    const userCode = this.#newUserCode();
    const authorization: DeviceAuthorization = {
      ...request,
      userCode,
      expiresAt: this.#now() + this.#lifetimeMs,
      intervalMs: this.#intervalSeconds * 1000,
    };
    this.#byDeviceCode.set(hashOf(deviceCode), authorization);
    this.#byUserCode.set(userCode, authorization);
    return {
      deviceCode,
      userCode: formatUserCode(userCode),
      expiresIn: Math.round(this.#lifetimeMs / 1000),
      interval: this.#intervalSeconds,
    };
  }

  /** The live, undecided authorization of a code a person typed (any case, dashes and spaces ignored). */
  pending(typedUserCode: string): PendingDeviceAuthorization | undefined {
    const authorization = this.#byUserCode.get(normalizeUserCode(typedUserCode));
    if (!authorization || authorization.decision || authorization.expiresAt <= this.#now()) return undefined;
    const { userCode, clientId, scopes, resource, expiresAt } = authorization;
    return { userCode, clientId, scopes, expiresAt, ...(resource ? { resource } : {}) };
  }

  /** Records the person's approval; false when the code is no longer pending (expired, decided, unknown). */
  approve(userCode: string, approval: Approval): boolean {
    return this.#decide(userCode, { approved: approval });
  }

  /** Records the person's refusal; false when the code is no longer pending. */
  deny(userCode: string): boolean {
    return this.#decide(userCode, { denied: true });
  }

  /**
   * The token endpoint's device code grant (RFC 8628 §3.4, §3.5): tokens once approved, else the RFC's error for
   * where the authorization stands. `resource` is the canonical resource the token request named, if any.
   */
  redeem(clientId: string, deviceCode: string, resource: string | undefined): IssuedTokens {
    const hash = hashOf(deviceCode);
    const authorization = this.#byDeviceCode.get(hash);
    if (!authorization) throw new OAuthError("invalid_grant", "device_code is invalid");
    if (authorization.clientId !== clientId) {
      throw new OAuthError("invalid_grant", "device_code was issued to another client");
    }
    if (authorization.redeemedFamilyId) {
      this.#grants.revokeFamily(authorization.redeemedFamilyId);
      throw new OAuthError(
        "invalid_grant",
        "device_code was already used; the tokens issued for it are revoked",
      );
    }
    const now = this.#now();
    if (authorization.expiresAt <= now) {
      this.#forget(hash, authorization);
      throw new OAuthError("expired_token", "device_code has expired; start the sign-in again");
    }
    const decision = authorization.decision;
    if (decision && "denied" in decision) {
      this.#forget(hash, authorization);
      throw new OAuthError("access_denied", "The user denied the authorization request");
    }
    if (!decision) {
      const early =
        authorization.lastPolledAt !== undefined &&
        now - authorization.lastPolledAt < authorization.intervalMs - POLL_TOLERANCE_MS;
      authorization.lastPolledAt = now;
      if (early) {
        authorization.intervalMs += SLOW_DOWN_STEP_SECONDS * 1000;
        throw new OAuthError(
          "slow_down",
          `polled faster than every ${authorization.intervalMs / 1000 - SLOW_DOWN_STEP_SECONDS} s; ` +
            `poll every ${authorization.intervalMs / 1000} s from now on`,
        );
      }
      throw new OAuthError("authorization_pending", "The user has not approved the request yet");
    }
    const approval = decision.approved;
    if (resource && approval.resource && resource !== approval.resource) {
      throw new OAuthError("invalid_target", "resource does not match the device authorization request");
    }
    const bound = approval.resource ?? resource;
    const tokens = this.#grants.startGrant({ ...approval, ...(bound ? { resource: bound } : {}) });
    authorization.redeemedFamilyId = tokens.family.id;
    return tokens;
  }

  /** How many authorizations are held (pending, decided, or kept to recognise a late poll). */
  size(): number {
    return this.#byDeviceCode.size;
  }

  #decide(userCode: string, decision: NonNullable<DeviceAuthorization["decision"]>): boolean {
    const authorization = this.#byUserCode.get(normalizeUserCode(userCode));
    if (!authorization || authorization.decision || authorization.expiresAt <= this.#now()) return false;
    authorization.decision = decision;
    return true;
  }

  /** Forgets authorizations a lifetime past their expiry (until then a late poll still hears `expired_token`). */
  #prune(): void {
    const now = this.#now();
    for (const [hash, authorization] of this.#byDeviceCode) {
      if (authorization.expiresAt + this.#lifetimeMs <= now) this.#forget(hash, authorization);
    }
  }

  #forget(hash: string, authorization: DeviceAuthorization): void {
    this.#byDeviceCode.delete(hash);
    if (this.#byUserCode.get(authorization.userCode) === authorization) {
      this.#byUserCode.delete(authorization.userCode);
    }
  }

  #newUserCode(): string {
    for (;;) {
      let code = "";
      for (let i = 0; i < USER_CODE_LENGTH; i++)
        code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
      if (!this.#byUserCode.has(code)) return code;
    }
  }
}

/** `BCDFGHJK` as people read it: `BCDF-GHJK`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, USER_CODE_LENGTH / 2)}-${code.slice(USER_CODE_LENGTH / 2)}`;
}

/** A typed user code as stored: upper case, letters only (RFC 8628 §6.1: forgive case and punctuation). */
export function normalizeUserCode(typed: string): string {
  return typed
    .slice(0, 64)
    .toUpperCase()
    .replace(/[^A-Z]/g, "");
}

function hashOf(code: string): string {
  return createHash("sha256").update(code).digest("base64url");
}
