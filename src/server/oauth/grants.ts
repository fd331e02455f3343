/** The OAuth server's records and flows: registered clients (bounded), one-time codes, token families with rotation, pending consents, and each grant's exchange. */
import { createHash } from "node:crypto";
import type { Principal } from "../context.js";
import { newId, newSecret, sameSecret } from "../ids.js";
import type { Store, StoreCollection } from "../store.js";
import type { RegisteredClient } from "./registration.js";

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

/** A dynamic client's registration, first grant, and the last expiry of its live grants (then it is forgotten). */
interface RegistrationRecord {
  registeredAt: number;
  usedAt?: number;
  grantsUntil?: number;
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
  /** Absent for `client_credentials`: a new token is asked for the same way. */
  refreshToken?: string;
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
  readonly #clients: StoreCollection<RegisteredClient>;
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

  /** The client, unless it is a dynamic registration that expired (which is then forgotten). */
  getClient(clientId: string): RegisteredClient | undefined {
    const registration = this.#registrations.get(clientId);
    if (registration && this.#expired(registration, this.#now())) {
      this.#forgetRegistration(clientId);
      return undefined;
    }
    return this.#clients.get(clientId);
  }

  /** True for a client the server holds a registration record of (dynamically registered, so not vouched for). */
  isDynamicallyRegistered(clientId: string): boolean {
    return this.#registrations.has(clientId);
  }

  /** Keeps a client known before any registration (pre-registered): never expires, not counted in the cap. */
  saveClient(client: RegisteredClient): RegisteredClient {
    this.#clients.set(client.client_id, client);
    return client;
  }

  /** RFC 7591 dynamic registration: kept until it expires unused or is evicted to make room. */
  registerClient(client: RegisteredClient): RegisteredClient {
    this.#store.batch(() => {
      this.#clients.set(client.client_id, client);
      this.#registrations.set(client.client_id, { registeredAt: this.#now() });
    });
    return client;
  }

  /**
   * Before a registration: forgets expired registrations (unused, or whose grants have all ended), then, at the
   * cap, the oldest unused one. False when the cap is reached by clients that all hold live grants.
   */
  makeRoomForRegistration(): boolean {
    const now = this.#now();
    const registrations = this.#registrations.entries();
    const expired = registrations.filter(([, record]) => this.#expired(record, now));
    if (expired.length > 0) {
      this.#store.batch(() => {
        for (const [clientId] of expired) this.#forgetRegistration(clientId);
      });
    }
    let count = registrations.length - expired.length;
    if (count < this.#maxRegisteredClients) return true;
    const unused = registrations
      .filter(([, record]) => record.usedAt === undefined && !this.#expired(record, now))
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
    return this.#registrations.size();
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
    const tokens = this.startGrant(approval);
    record.exchangedFamilyId = tokens.family.id;
    // Kept until its expiry so a replay can be recognised and its family revoked.
    record.expiresAt = Math.max(record.expiresAt, this.#now() + AUTHORIZATION_CODE_TTL_MS);
    return tokens;
  }

  /** The first tokens of a new family bound to the approval (a code exchanged, a device code redeemed). */
  startGrant(approval: Approval): IssuedTokens {
    const family: GrantFamily = { ...approval, id: newId("grant"), createdAt: this.#now(), revoked: false };
    return this.#store.batch(() => {
      this.#families.set(family.id, family);
      const tokens = this.#issueTokens(family);
      const registration = this.#registrations.get(approval.clientId);
      if (registration) {
        this.#registrations.set(approval.clientId, {
          ...registration,
          usedAt: registration.usedAt ?? this.#now(),
          grantsUntil: Math.max(registration.grantsUntil ?? 0, this.#now() + REFRESH_TOKEN_TTL_MS),
        });
      }
      return tokens;
    });
  }

  /** `client_credentials` (RFC 6749 §4.4): a family of its own with an access token and no refresh token (§4.4.3). */
  issueWithoutPerson(approval: Approval): IssuedTokens {
    const family: GrantFamily = { ...approval, id: newId("grant"), createdAt: this.#now(), revoked: false };
    return this.#store.batch(() => {
      this.#families.set(family.id, family);
      return this.#issueTokens(family, false);
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
      const registration = this.#registrations.get(clientId);
      if (registration) {
        const grantsUntil = Math.max(registration.grantsUntil ?? 0, this.#now() + REFRESH_TOKEN_TTL_MS);
        this.#registrations.set(clientId, { ...registration, grantsUntil });
      }
      return this.#issueTokens(family);
    });
    return { ok: true, tokens };
  }

  /** The family a refresh token belongs to (whatever its state), or undefined. */
  familyOfRefreshToken(refreshToken: string): GrantFamily | undefined {
    const record = this.#tokens.get(hashOf(refreshToken));
    return record?.kind === "refresh" ? this.#families.get(record.familyId) : undefined;
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

  /** Ends a sign-in; its client's registration then lives only as long as its other grants. */
  revokeFamily(familyId: string): void {
    const family = this.#families.get(familyId);
    if (!family) return;
    this.#store.batch(() => {
      this.#families.set(familyId, { ...family, revoked: true });
      for (const [hash, record] of this.#tokens.entries()) {
        if (record.familyId === familyId) this.#tokens.delete(hash);
      }
      const registration = this.#registrations.get(family.clientId);
      if (registration) {
        // 0 when none is left: the registration then lives out its unused time to live only.
        const grantsUntil = this.#liveGrantsUntil(family.clientId) ?? 0;
        this.#registrations.set(family.clientId, { ...registration, grantsUntil });
      }
    });
  }

  #issueTokens(family: GrantFamily, withRefreshToken = true): IssuedTokens {
    this.#pruneTokens();
    const now = this.#now();
    const accessToken = newSecret(ACCESS_TOKEN_PREFIX);
    this.#tokens.set(hashOf(accessToken), {
      kind: "access",
      familyId: family.id,
      expiresAt: now + this.#accessTokenTtlSeconds * 1000,
    });
    if (!withRefreshToken) return { accessToken, expiresIn: this.#accessTokenTtlSeconds, family };
    const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
    this.#tokens.set(hashOf(refreshToken), {
      kind: "refresh",
      familyId: family.id,
      expiresAt: now + REFRESH_TOKEN_TTL_MS,
    });
    return { accessToken, refreshToken, expiresIn: this.#accessTokenTtlSeconds, family };
  }

  /**
   * Drops expired tokens (rotated refresh tokens stay until they expire, to catch replays), then the families
   * no token refers to any more (older than a code's lifetime, so a replayed code still finds what to revoke).
   */
  #pruneTokens(): void {
    const now = this.#now();
    const referenced = new Set<string>();
    for (const [hash, record] of this.#tokens.entries()) {
      if (record.expiresAt <= now) this.#tokens.delete(hash);
      else referenced.add(record.familyId);
    }
    for (const [id, family] of this.#families.entries()) {
      if (!referenced.has(id) && family.createdAt + 2 * AUTHORIZATION_CODE_TTL_MS <= now)
        this.#families.delete(id);
    }
  }

  /** The last expiry of a live refresh token of the client's live families, or undefined when none is left. */
  #liveGrantsUntil(clientId: string): number | undefined {
    const now = this.#now();
    let until: number | undefined;
    for (const record of this.#tokens.values()) {
      if (record.kind !== "refresh" || record.rotatedAt !== undefined || record.expiresAt <= now) continue;
      const family = this.#families.get(record.familyId);
      if (!family || family.revoked || family.clientId !== clientId) continue;
      until = Math.max(until ?? 0, record.expiresAt);
    }
    return until;
  }

  /** Unused past its time to live, or used and every grant it held has ended (expired or revoked). */
  #expired(record: RegistrationRecord, now: number): boolean {
    const unusedUntil = record.registeredAt + this.#unusedRegistrationTtlMs;
    if (record.usedAt === undefined) return unusedUntil <= now;
    // Records from before `grantsUntil` was kept: the longest a refresh token could live after first use.
    return Math.max(unusedUntil, record.grantsUntil ?? record.usedAt + REFRESH_TOKEN_TTL_MS) <= now;
  }

  /** Forgets a dynamic registration with everything it was granted. */
  #forgetRegistration(clientId: string): void {
    this.#store.batch(() => {
      this.#registrations.delete(clientId);
      this.#clients.delete(clientId);
      const families = new Set<string>();
      for (const [id, family] of this.#families.entries()) {
        if (family.clientId !== clientId) continue;
        families.add(id);
        this.#families.delete(id);
      }
      if (families.size === 0) return;
      for (const [hash, record] of this.#tokens.entries()) {
        if (families.has(record.familyId)) this.#tokens.delete(hash);
      }
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

/** Scopes of this server: read and write chats; `offline_access` is accepted (refresh tokens are always issued). */
export const CHAT_SCOPES = ["chat:read", "chat:write"] as const;
export const OFFLINE_ACCESS_SCOPE = "offline_access";
const KNOWN_SCOPES = new Set<string>([...CHAT_SCOPES, OFFLINE_ACCESS_SCOPE]);
export const PENDING_CONSENT_TTL_MS = 10 * 60 * 1000;
const MAX_PENDING_CONSENTS = 10_000;

/** An OAuth error answer (RFC 6749 §4.1.2.1, §5.2): the code, a description, and the HTTP status at `/token`. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(`${error}: ${description}`);
  }
}

/** What a checked authorization request asks for. */
export interface AuthorizationRequest {
  client: RegisteredClient;
  redirectUri: string;
  codeChallenge: string;
  state?: string;
  scopes: string[];
  resource?: string;
}

/** A device's authorization request (RFC 8628), on its way to consent once a person entered its user code. */
export interface DeviceConsentRequest {
  client: RegisteredClient;
  scopes: string[];
  resource?: string;
  /** The code the person entered (as stored), which the decision is recorded for. */
  userCode: string;
}

/** A request waiting on the consent page: a browser's authorization request, or a device's. */
export type PendingConsent = (AuthorizationRequest | DeviceConsentRequest) & {
  id: string;
  expiresAt: number;
  /** Held in an HttpOnly cookie of the browser that opened `/authorize` (or entered the code); consent requires it. */
  browserNonce: string;
};

export function isDeviceConsent(pending: PendingConsent): pending is DeviceConsentRequest & PendingConsent {
  return "userCode" in pending;
}

/** The token response body (RFC 6749 §5.1). */
export interface TokenResponseBody {
  access_token: string;
  /** "DPoP" when the tokens are bound to the key of the request's DPoP proof (RFC 9449 §5). */
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  refresh_token?: string;
  scope: string;
  /** Extra parameter (RFC 6749 §5.1): slug of the account or team the grant acts for, chosen at consent. */
  account: string;
}

export interface AuthorizationFlowsOptions {
  grants: OAuthGrants;
  /** RFC 8707 resource identifiers this server accepts (`<base>/mcp`, `<base>/v2`). */
  resources: readonly string[];
  /** The issuer, added as `iss` to every authorization response (RFC 9207). */
  issuer: string;
  now: () => number;
}

export class AuthorizationFlows {
  readonly #options: AuthorizationFlowsOptions;
  readonly #pending = new Map<string, PendingConsent>();

  constructor(options: AuthorizationFlowsOptions) {
    this.#options = options;
  }

  /** The scopes and resource of a request, checked: `invalid_scope` or `invalid_target` otherwise. */
  checkScopesAndResource(
    scope: string | null,
    resource: string | null,
  ): { scopes: string[]; resource?: string } {
    const scopes = grantedScopes(scope);
    return resource ? { scopes, resource: this.ourResource(resource) } : { scopes };
  }

  /** Keeps the request for the consent page (at most until `notAfter`); returns it. */
  addPending(
    request: AuthorizationRequest | DeviceConsentRequest,
    browserNonce: string,
    id: string,
    notAfter = Number.POSITIVE_INFINITY,
  ): PendingConsent {
    this.#prunePending();
    if (this.#pending.size >= MAX_PENDING_CONSENTS) {
      const oldest = this.#pending.keys().next().value;
      if (oldest !== undefined) this.#pending.delete(oldest);
    }
    const pending = {
      ...request,
      id,
      browserNonce,
      expiresAt: Math.min(notAfter, this.#options.now() + PENDING_CONSENT_TTL_MS),
    };
    this.#pending.set(id, pending);
    return pending;
  }

  /** The live pending request with this id (the consent page reads it), or undefined. */
  pendingConsent(id: string): PendingConsent | undefined {
    const pending = this.#pending.get(id);
    if (pending && pending.expiresAt <= this.#options.now()) {
      this.#pending.delete(id);
      return undefined;
    }
    return pending;
  }

  /** Ends a pending request (approved or denied): a consent form works once. */
  takePendingConsent(id: string): PendingConsent | undefined {
    const pending = this.pendingConsent(id);
    this.#pending.delete(id);
    return pending;
  }

  /** The client's redirect URI with a fresh code, the echoed state and `iss`. */
  approvedRedirect(
    approval: Approval,
    request: Pick<AuthorizationRequest, "codeChallenge" | "redirectUri" | "state">,
  ): string {
    const code = this.#options.grants.issueCode(approval, request.codeChallenge, request.redirectUri);
    return this.authorizationResponse(request.redirectUri, { code }, request.state);
  }

  /** An authorization response (success or error) at the redirect URI: `state` when sent, and always `iss`. */
  authorizationResponse(redirectUri: string, params: Record<string, string>, state?: string): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    if (state !== undefined) url.searchParams.set("state", state);
    url.searchParams.set("iss", this.#options.issuer);
    return url.href;
  }

  /** `grant_type=authorization_code`: code, PKCE verifier, redirect URI and resource checked. */
  exchangeCode(
    client: RegisteredClient,
    code: string,
    verifier: string,
    redirectUri: string | null,
    resource: string | null,
  ): TokenResponseBody {
    const grants = this.#options.grants;
    const record = codeOrThrow(grants.lookupCode(code, client.client_id));
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    if (!sameSecret(challenge, record.codeChallenge)) {
      throw new OAuthError("invalid_grant", "code_verifier does not match the code_challenge");
    }
    const singleRegistered =
      client.redirect_uris.length === 1 && client.redirect_uris[0] === record.redirectUri;
    if (redirectUri === null ? !singleRegistered : redirectUri !== record.redirectUri) {
      throw new OAuthError("invalid_grant", "redirect_uri does not match the authorization request");
    }
    let boundResource = record.resource;
    if (resource) {
      const requested = this.ourResource(resource);
      if (boundResource && requested !== boundResource) {
        throw new OAuthError("invalid_target", "resource does not match the authorization request");
      }
      boundResource = requested;
    }
    const approval: Approval = {
      clientId: record.clientId,
      account: record.account,
      scopes: record.scopes,
      ...(record.userId ? { userId: record.userId } : {}),
      ...(boundResource ? { resource: boundResource } : {}),
    };
    return tokenResponse(grants.exchangeCode(code, approval));
  }

  /** `grant_type=refresh_token`: rotation; narrower scopes and the same resource are checked before rotating. */
  exchangeRefreshToken(
    client: RegisteredClient,
    refreshToken: string,
    scope: string | null,
    resource: string | null,
  ): TokenResponseBody {
    const grants = this.#options.grants;
    const family = grants.familyOfRefreshToken(refreshToken);
    if (family && family.clientId === client.client_id && !family.revoked) {
      const requested = (scope ?? "").split(" ").filter(Boolean);
      if (requested.some((wanted) => !family.scopes.includes(wanted))) {
        throw new OAuthError("invalid_scope", "a refresh cannot widen the scopes of the grant");
      }
      if (resource && family.resource && this.ourResource(resource) !== family.resource) {
        throw new OAuthError("invalid_target", "resource does not match the grant");
      }
    }
    const outcome = grants.refresh(refreshToken, client.client_id);
    if (!outcome.ok) {
      throw new OAuthError(
        "invalid_grant",
        outcome.reason === "reused"
          ? "refresh token was already used; the sign-in is revoked, sign in again"
          : `refresh token is ${outcome.reason === "other-client" ? "not issued to this client" : outcome.reason}`,
      );
    }
    return tokenResponse(outcome.tokens);
  }

  /** `grant_type=client_credentials` (RFC 6749 §4.4): tokens for the account the client is registered to act for. */
  grantClientCredentials(
    client: RegisteredClient,
    scope: string | null,
    resource: string | null,
  ): TokenResponseBody {
    const account = client.client_credentials_account;
    if (!account || !client.grant_types.includes("client_credentials")) {
      throw new OAuthError("unauthorized_client", "the client is not registered for client_credentials");
    }
    const checked = this.checkScopesAndResource(scope, resource);
    const approval: Approval = { clientId: client.client_id, account, ...checked };
    return tokenResponse(this.#options.grants.issueWithoutPerson(approval));
  }

  /** The canonical form of a requested resource when it is one of ours; `invalid_target` otherwise. */
  ourResource(href: string): string {
    const wanted = withoutTrailingSlash(href);
    const match = this.#options.resources.find((resource) => withoutTrailingSlash(resource) === wanted);
    if (!match) {
      throw new OAuthError(
        "invalid_target",
        `unknown resource ${href}; use one of ${this.#options.resources.join(", ")}`,
      );
    }
    return match;
  }

  #prunePending(): void {
    const now = this.#options.now();
    for (const [id, pending] of this.#pending) if (pending.expiresAt <= now) this.#pending.delete(id);
  }
}

/** The requested scopes when all are known; none requested means the chat scopes. */
function grantedScopes(requested: string | null): string[] {
  const scopes = (requested ?? "").split(" ").filter((scope) => scope.length > 0);
  const unknown = scopes.filter((scope) => !KNOWN_SCOPES.has(scope));
  if (unknown.length > 0) throw new OAuthError("invalid_scope", `unknown scope ${unknown.join(" ")}`);
  if (!scopes.some((scope) => scope !== OFFLINE_ACCESS_SCOPE)) scopes.push(...CHAT_SCOPES);
  return [...new Set(scopes)];
}

function codeOrThrow(lookup: CodeLookup) {
  if (lookup.ok) return lookup.code;
  const why = {
    unknown: "authorization code is invalid",
    expired: "authorization code has expired",
    reused: "authorization code was already used; the tokens issued for it are revoked",
    "other-client": "authorization code was issued to another client",
  }[lookup.reason];
  throw new OAuthError("invalid_grant", why);
}

export function tokenResponse(tokens: IssuedTokens): TokenResponseBody {
  return {
    access_token: tokens.accessToken,
    token_type: "Bearer",
    expires_in: tokens.expiresIn,
    ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
    scope: tokens.family.scopes.join(" "),
    account: tokens.family.account,
  };
}

function withoutTrailingSlash(value: string): string {
  return value.replace(/\/+$/, "");
}
