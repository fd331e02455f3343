/** Records of the OAuth server: registered clients (bounded), one-time authorization codes, and token families with rotation. */
import { createHash } from "node:crypto";
import type { OAuthClientInformationFull } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Principal, StoreCollection } from "../context.js";
import { newId, newSecret } from "../ids.js";
import type { Store } from "../store.js";

export const ACCESS_TOKEN_PREFIX = "chat_at_";
export const REFRESH_TOKEN_PREFIX = "chat_rt_";
export const AUTHORIZATION_CODE_TTL_MS = 60_000;
export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
export const DEFAULT_UNUSED_REGISTRATION_TTL_SECONDS = 24 * 3600;
export const DEFAULT_MAX_REGISTERED_CLIENTS = 10_000;

/** What the person approved: the account or team, and who they are. */
export interface Approval {
  clientId: string;
  userId?: string;
  account: string;
  scopes: string[];
  resource?: string;
}

/** One sign-in: every access and refresh token descends from it; its id is the principal's `subject`. */
export interface GrantFamily extends Approval {
  id: string;
  createdAt: number;
  revoked: boolean;
}

/** A token is stored under the SHA-256 of its value, never in clear. */
interface TokenRecord {
  kind: "access" | "refresh";
  familyId: string;
  expiresAt: number;
  /** Set when a refresh token has been exchanged: presenting it again means it leaked. */
  rotatedAt?: number;
}

/** When a dynamically registered client was registered, and first used for a grant (a code exchanged). */
interface RegistrationRecord {
  registeredAt: number;
  usedAt?: number;
}

interface AuthorizationCode extends Approval {
  codeChallenge: string;
  redirectUri: string;
  expiresAt: number;
  /** The family issued when the code was exchanged; a second use revokes it (OAuth 2.1 §4.1.3). */
  exchangedFamilyId?: string;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  family: GrantFamily;
}

export type CodeLookup =
  | { ok: true; code: Readonly<AuthorizationCode> }
  | { ok: false; reason: "unknown" | "expired" | "reused" | "other-client" };

export type RefreshOutcome =
  | { ok: true; tokens: IssuedTokens }
  | { ok: false; reason: "unknown" | "expired" | "revoked" | "reused" | "other-client" };

export interface OAuthGrantsOptions {
  store: Store;
  now: () => number;
  accessTokenTtlSeconds: number;
  /** Dynamic registrations never used for a grant are forgotten after this long. */
  unusedRegistrationTtlMs?: number;
  /** Most dynamic registrations kept at once. */
  maxRegisteredClients?: number;
}

/** Clients, grant families and tokens persist in the store (a data-file restart keeps sign-ins); codes stay in memory. */
export class OAuthGrants {
  readonly #clients: StoreCollection<OAuthClientInformationFull>;
  readonly #families: StoreCollection<GrantFamily>;
  readonly #tokens: StoreCollection<TokenRecord>;
  /** Only dynamically registered clients have a record; pre-registered ones are kept for good. */
  readonly #registrations: StoreCollection<RegistrationRecord>;
  readonly #codes = new Map<string, AuthorizationCode>();
  readonly #store: Store;
  readonly #now: () => number;
  readonly #accessTokenTtlSeconds: number;
  readonly #unusedRegistrationTtlMs: number;
  readonly #maxRegisteredClients: number;

  constructor(options: OAuthGrantsOptions) {
    this.#store = options.store;
    this.#now = options.now;
    this.#accessTokenTtlSeconds = options.accessTokenTtlSeconds;
    this.#unusedRegistrationTtlMs =
      options.unusedRegistrationTtlMs ?? DEFAULT_UNUSED_REGISTRATION_TTL_SECONDS * 1000;
    this.#maxRegisteredClients = options.maxRegisteredClients ?? DEFAULT_MAX_REGISTERED_CLIENTS;
    this.#clients = options.store.collection("oauth.clients");
    this.#families = options.store.collection("oauth.families");
    this.#tokens = options.store.collection("oauth.tokens");
    this.#registrations = options.store.collection("oauth.registrations");
  }

  /** The client, unless it is a dynamic registration that expired unused (which is then forgotten). */
  getClient(clientId: string): OAuthClientInformationFull | undefined {
    const registration = this.#registrations.get(clientId);
    if (registration && this.#expiredUnused(registration, this.#now())) {
      this.#forgetRegistration(clientId);
      return undefined;
    }
    return this.#clients.get(clientId);
  }

  /** Keeps a client known before any registration (pre-registered): never expires, not counted in the cap. */
  saveClient(client: OAuthClientInformationFull): OAuthClientInformationFull {
    this.#clients.set(client.client_id, client);
    return client;
  }

  /** RFC 7591 dynamic registration: kept until it expires unused or is evicted to make room. */
  registerClient(client: OAuthClientInformationFull): OAuthClientInformationFull {
    this.#store.batch(() => {
      this.#clients.set(client.client_id, client);
      this.#registrations.set(client.client_id, { registeredAt: this.#now() });
    });
    return client;
  }

  /**
   * Before a registration: forgets expired unused registrations, then, at the cap, the oldest unused one.
   * False when the cap is reached by clients that all hold grants (nothing may be evicted).
   */
  makeRoomForRegistration(): boolean {
    const now = this.#now();
    const registrations = this.#registrations.entries();
    const expired = registrations.filter(([, record]) => this.#expiredUnused(record, now));
    if (expired.length > 0) {
      this.#store.batch(() => {
        for (const [clientId] of expired) this.#forgetRegistration(clientId);
      });
    }
    let count = registrations.length - expired.length;
    if (count < this.#maxRegisteredClients) return true;
    const unused = registrations
      .filter(([, record]) => record.usedAt === undefined && !this.#expiredUnused(record, now))
      .sort(([, a], [, b]) => a.registeredAt - b.registeredAt);
    this.#store.batch(() => {
      for (const [clientId] of unused) {
        if (count < this.#maxRegisteredClients) break;
        this.#forgetRegistration(clientId);
        count -= 1;
      }
    });
    return count < this.#maxRegisteredClients;
  }

  /** How many dynamic registrations are kept (for tests and diagnostics). */
  registeredClientCount(): number {
    return this.#registrations.entries().length;
  }

  /** A one-time code for the approval, valid for 60 seconds. */
  issueCode(approval: Approval, codeChallenge: string, redirectUri: string): string {
    this.#pruneCodes();
    const code = newSecret("chat_ac_");
    this.#codes.set(hashOf(code), {
      ...approval,
      codeChallenge,
      redirectUri,
      expiresAt: this.#now() + AUTHORIZATION_CODE_TTL_MS,
    });
    return code;
  }

  /** Looks a code up for `clientId`; a code presented again after its exchange revokes what it issued. */
  lookupCode(code: string, clientId: string): CodeLookup {
    const record = this.#codes.get(hashOf(code));
    if (!record) return { ok: false, reason: "unknown" };
    if (record.exchangedFamilyId) {
      this.revokeFamily(record.exchangedFamilyId);
      return { ok: false, reason: "reused" };
    }
    if (record.expiresAt <= this.#now()) return { ok: false, reason: "expired" };
    if (record.clientId !== clientId) return { ok: false, reason: "other-client" };
    return { ok: true, code: record };
  }

  /** Marks the code used and issues the first tokens of a new family bound to the approval. */
  exchangeCode(code: string, approval: Approval): IssuedTokens {
    const record = this.#codes.get(hashOf(code));
    if (!record || record.exchangedFamilyId) throw new Error("The code was already exchanged.");
    const family: GrantFamily = { ...approval, id: newId("grant"), createdAt: this.#now(), revoked: false };
    record.exchangedFamilyId = family.id;
    // Kept until its expiry so a replay can be recognised and its family revoked.
    record.expiresAt = Math.max(record.expiresAt, this.#now() + AUTHORIZATION_CODE_TTL_MS);
    return this.#store.batch(() => {
      this.#families.set(family.id, family);
      const registration = this.#registrations.get(approval.clientId);
      if (registration && registration.usedAt === undefined) {
        this.#registrations.set(approval.clientId, { ...registration, usedAt: this.#now() });
      }
      return this.#issueTokens(family);
    });
  }

  /** Rotates a refresh token; reuse of an already-rotated one revokes its whole family. */
  refresh(refreshToken: string, clientId: string): RefreshOutcome {
    const hash = hashOf(refreshToken);
    const record = this.#tokens.get(hash);
    if (record?.kind !== "refresh") return { ok: false, reason: "unknown" };
    const family = this.#families.get(record.familyId);
    if (!family || family.revoked) return { ok: false, reason: "revoked" };
    if (family.clientId !== clientId) return { ok: false, reason: "other-client" };
    if (record.rotatedAt !== undefined) {
      this.revokeFamily(family.id);
      return { ok: false, reason: "reused" };
    }
    if (record.expiresAt <= this.#now()) return { ok: false, reason: "expired" };
    const tokens = this.#store.batch(() => {
      this.#tokens.set(hash, { ...record, rotatedAt: this.#now() });
      return this.#issueTokens(family);
    });
    return { ok: true, tokens };
  }

  familyOf(id: string): GrantFamily | undefined {
    return this.#families.get(id);
  }

  /** The principal of a live access token, or null (unknown, expired or revoked). */
  principalFor(accessToken: string): Principal | null {
    if (!accessToken.startsWith(ACCESS_TOKEN_PREFIX)) return null;
    const record = this.#tokens.get(hashOf(accessToken));
    if (record?.kind !== "access" || record.expiresAt <= this.#now()) return null;
    const family = this.#families.get(record.familyId);
    if (!family || family.revoked) return null;
    return {
      account: family.account,
      subject: family.id,
      via: "oauth",
      clientId: family.clientId,
      scopes: [...family.scopes],
      expiresAt: Math.floor(record.expiresAt / 1000),
      ...(family.userId ? { userId: family.userId } : {}),
      ...(family.resource ? { resource: family.resource } : {}),
    };
  }

  /** RFC 7009: revoking either token of a family ends the whole sign-in; unknown tokens are ignored. */
  revokeToken(token: string, clientId: string): void {
    const record = this.#tokens.get(hashOf(token));
    if (!record) return;
    const family = this.#families.get(record.familyId);
    if (family && family.clientId === clientId) this.revokeFamily(family.id);
  }

  revokeFamily(familyId: string): void {
    const family = this.#families.get(familyId);
    if (!family) return;
    this.#store.batch(() => {
      this.#families.set(familyId, { ...family, revoked: true });
      for (const [hash, record] of this.#tokens.entries()) {
        if (record.familyId === familyId) this.#tokens.delete(hash);
      }
    });
  }

  #issueTokens(family: GrantFamily): IssuedTokens {
    this.#pruneTokens();
    const now = this.#now();
    const accessToken = newSecret(ACCESS_TOKEN_PREFIX);
    const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
    this.#tokens.set(hashOf(accessToken), {
      kind: "access",
      familyId: family.id,
      expiresAt: now + this.#accessTokenTtlSeconds * 1000,
    });
    this.#tokens.set(hashOf(refreshToken), {
      kind: "refresh",
      familyId: family.id,
      expiresAt: now + REFRESH_TOKEN_TTL_MS,
    });
    return { accessToken, refreshToken, expiresIn: this.#accessTokenTtlSeconds, family };
  }

  /** Drops expired tokens (rotated refresh tokens stay until they expire, to catch replays). */
  #pruneTokens(): void {
    const now = this.#now();
    for (const [hash, record] of this.#tokens.entries()) {
      if (record.expiresAt <= now) this.#tokens.delete(hash);
    }
  }

  #expiredUnused(record: RegistrationRecord, now: number): boolean {
    return record.usedAt === undefined && record.registeredAt + this.#unusedRegistrationTtlMs <= now;
  }

  #forgetRegistration(clientId: string): void {
    this.#store.batch(() => {
      this.#registrations.delete(clientId);
      this.#clients.delete(clientId);
    });
  }

  #pruneCodes(): void {
    const now = this.#now();
    for (const [hash, code] of this.#codes) if (code.expiresAt <= now) this.#codes.delete(hash);
  }
}

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}
