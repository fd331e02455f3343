/** The OAuth server's records and flows: client metadata and registrations (bounded), one-time codes, token families with rotation, pending consents, scopes and resources, and the one error of every endpoint. */
import { createHash } from "node:crypto";
import * as z from "zod";
import type { Principal } from "../context.js";
import { jsonResponse, readFormBody } from "../http.js";
import { newId, newSecret, sameSecret } from "../ids.js";
import type { OAuthRegistrationLimits } from "../options.js";
import { ServiceError } from "../service-error.js";
import type { Store, StoreCollection } from "../store.js";

export const ACCESS_TOKEN_PREFIX = "chat_at_";
export const AUTHORIZATION_CODE_TTL_MS = 60_000;
export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
export const PENDING_CONSENT_TTL_MS = 10 * 60 * 1000;
const MAX_PENDING_CONSENTS = 10_000;
/** Scopes of this server: read and write chats; `offline_access` is accepted (refresh tokens are always issued). */
export const CHAT_SCOPES = ["chat:read", "chat:write"] as const;
export const OFFLINE_ACCESS_SCOPE = "offline_access";
const KNOWN_SCOPES = new Set<string>([...CHAT_SCOPES, OFFLINE_ACCESS_SCOPE]);

/** An OAuth error answer (RFC 6749 §4.1.2.1, §5.2): the code, a description, and the HTTP status and headers of its JSON. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`);
  }
}

/** `slug` when it is a seeded account or team; otherwise a configuration error of `where`. */
export function seededAccount(accounts: ReadonlyMap<string, unknown>, slug: string, where: string): string {
  if (accounts.has(slug)) return slug;
  throw new Error(`${where}: no account or team "${slug}"; use one of ${[...accounts.keys()].join(", ")}.`);
}

/** Token responses are never cached (RFC 6749 §5.1). */
export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

/** Runs an endpoint, answering an `OAuthError` as its JSON error (401 ones with a Basic challenge). */
export async function answerOAuthErrors(run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    const headers: Record<string, string> = { ...NO_STORE, ...error.headers };
    if (error.status === 401) headers["www-authenticate"] = 'Basic realm="token"';
    return jsonResponse(error.status, { error: error.error, error_description: error.description }, headers);
  }
}

export async function formOf(request: Request): Promise<URLSearchParams> {
  if (request.method !== "POST") throw new OAuthError("invalid_request", "use POST", 405);
  return readFormBody(request).catch((error) => {
    const why = error instanceof ServiceError ? error.message : "unreadable form";
    throw new OAuthError("invalid_request", why);
  });
}

/** RFC 6749 §2.3.1: `Basic base64(urlencode(id):urlencode(secret))`. */
export function basicCredentials(header: string): { clientId: string; secret: string } | null {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  const decoded = Buffer.from(match?.[1] ?? "", "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return null;
  try {
    const [clientId, secret] = [decoded.slice(0, colon), decoded.slice(colon + 1)].map((part) =>
      decodeURIComponent(part.replace(/\+/g, " ")),
    ) as [string, string];
    return clientId ? { clientId, secret } : null;
  } catch {
    return null;
  }
}

// Client metadata (RFC 7591) as this server accepts it, from `/register` and from client ID metadata documents.

/** Largest registration kept, as stored JSON: names and URLs fit many times over; blobs (`jwks`, ...) do not. */
export const MAX_REGISTRATION_BYTES = 4096;
/** RFC 8628 §3.4: the grant type of a device code at the token endpoint. */
export const DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";
const SUPPORTED_GRANT_TYPES = ["authorization_code", "refresh_token", DEVICE_CODE_GRANT_TYPE];
/** What a client registered without `grant_types` gets (RFC 7591 §2: `authorization_code`), with refresh. */
export const DEFAULT_GRANT_TYPES = ["authorization_code", "refresh_token"] as const;
export const TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"] as const;

const text = (max: number) => z.string().max(max);
const webUrl = text(2000).refine(
  (value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol),
  "must be an http(s) URL",
);
const onlyOf = (allowed: readonly string[], message: string) =>
  z
    .array(text(200))
    .max(10)
    .optional()
    .refine((values) => values?.every((value) => allowed.includes(value)) ?? true, message);

/**
 * The metadata fields kept; any other field is dropped (RFC 7591 §2: the server may ignore what it does not
 * support). Values the server cannot honour are refused with `invalid_client_metadata`.
 */
const ClientMetadataSchema = z.object({
  // Required (non-empty) for the code grant only: a client of the device grant alone has nowhere to redirect to.
  redirect_uris: z.array(text(2000)).max(10).optional(),
  client_name: text(200).optional(),
  client_uri: webUrl.optional(),
  logo_uri: webUrl.optional(),
  tos_uri: webUrl.optional(),
  policy_uri: webUrl.optional(),
  contacts: z.array(text(320)).max(5).optional(),
  scope: text(1000).optional(),
  software_id: text(200).optional(),
  software_version: text(200).optional(),
  application_type: z.enum(["native", "web"]).optional(),
  grant_types: onlyOf(SUPPORTED_GRANT_TYPES, `grant_types may only hold ${SUPPORTED_GRANT_TYPES.join(", ")}`),
  response_types: onlyOf(["code"], "response_types may only hold code"),
  token_endpoint_auth_method: z
    .enum(TOKEN_ENDPOINT_AUTH_METHODS, {
      error: `token_endpoint_auth_method must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(", ")}`,
    })
    .optional(),
});
export type ClientMetadata = z.infer<typeof ClientMetadataSchema>;

/** A client as the server keeps it: its metadata with defaults filled in, and its credentials. */
export interface RegisteredClient
  extends Omit<
    ClientMetadata,
    "redirect_uris" | "grant_types" | "response_types" | "token_endpoint_auth_method"
  > {
  redirect_uris: string[];
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  client_secret_expires_at?: number;
  grant_types: string[];
  response_types: string[];
  /** `private_key_jwt` only for pre-registered clients with `jwks` (dynamic registration keeps no key sets). */
  token_endpoint_auth_method: (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number] | "private_key_jwt";
  jwks?: { keys: JsonWebKey[] };
  /** The account or team the `client_credentials` grant acts for (pre-registered clients only). */
  client_credentials_account?: string;
}

/** Checked client metadata: known fields only, supported values, receivable redirect URIs, small; else an RFC 7591 error. */
export function parseClientMetadata(body: unknown): ClientMetadata {
  const refused = (error: string, description: string) => new OAuthError(error, description);
  const parsed = ClientMetadataSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const error = issue?.path[0] === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata";
    throw refused(error, `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
  }
  const metadata = parsed.data;
  if (
    (metadata.grant_types ?? DEFAULT_GRANT_TYPES).includes("authorization_code") &&
    !metadata.redirect_uris?.length
  )
    throw refused("invalid_redirect_uri", "redirect_uris: required for the authorization_code grant");
  for (const uri of metadata.redirect_uris ?? []) {
    const problem = redirectUriProblem(uri);
    if (problem) throw refused("invalid_redirect_uri", `redirect_uri ${problem}`);
  }
  if (JSON.stringify(metadata).length > MAX_REGISTRATION_BYTES)
    throw refused(
      "invalid_client_metadata",
      `the client metadata is larger than ${MAX_REGISTRATION_BYTES} bytes`,
    );
  return metadata;
}

/** The client of the metadata, every field answered with its default; `none` clients get no secret. */
export function clientOf(
  metadata: ClientMetadata,
  clientId: string,
  nowMs: number,
  method: RegisteredClient["token_endpoint_auth_method"],
): RegisteredClient {
  return {
    ...metadata,
    redirect_uris: metadata.redirect_uris ?? [],
    client_id: clientId,
    client_id_issued_at: Math.floor(nowMs / 1000),
    grant_types: metadata.grant_types ?? [...DEFAULT_GRANT_TYPES],
    response_types: metadata.response_types ?? ["code"],
    token_endpoint_auth_method: method,
    ...(method === "none" ? {} : { client_secret: newSecret("chat_cs_"), client_secret_expires_at: 0 }),
  };
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
/** Schemes that can never receive a code for a client: local files, script and browser-internal pages. */
const FORBIDDEN_SCHEMES = new Set(
  "file javascript data vbscript about blob chrome chrome-extension edge view-source ftp ws wss"
    .split(" ")
    .map((scheme) => `${scheme}:`),
);

/** Why `uri` is not an acceptable redirect URI, or null when it is (RFC 6749 §3.1.2, OAuth 2.1 §2.3.1, RFC 8252 §7). */
export function redirectUriProblem(uri: string): string | null {
  if (!URL.canParse(uri)) return "is not an absolute URL";
  if (uri.includes("#")) return "must not contain a fragment";
  const url = new URL(uri);
  if (url.username || url.password) return "must not contain user information";
  if (FORBIDDEN_SCHEMES.has(url.protocol))
    return `uses the ${url.protocol} scheme, which cannot receive a code`;
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:")
    return LOOPBACK_HOSTS.has(url.hostname) ? null : "uses plain http on a host that is not loopback";
  // RFC 8252 §7.1: private-use schemes are in reverse-domain form (e.g. com.example.app:/callback).
  return /^[a-z][a-z0-9+-]*\.[a-z0-9+.-]+:$/i.test(url.protocol)
    ? null
    : `uses the unknown scheme ${url.protocol}`;
}

/**
 * True when `requested` is one of `registered`: exactly, or for a loopback http URI on any port (RFC 8252 §7.3,
 * native apps bind whatever port is free), with scheme, host, path and query equal.
 */
export function redirectUriRegistered(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  if (!URL.canParse(requested)) return false;
  const withoutPort = (uri: string) => {
    const url = new URL(uri);
    url.port = "";
    return url.href;
  };
  const wanted = new URL(requested);
  if (wanted.protocol !== "http:" || !LOOPBACK_HOSTS.has(wanted.hostname)) return false;
  return registered.some((uri) => URL.canParse(uri) && withoutPort(uri) === withoutPort(requested));
}

/** What the person approved: the account or team, and who they are. */
export interface Approval {
  clientId: string;
  userId?: string;
  account: string;
  scopes: string[];
  resource?: string;
}

/** One sign-in: every access and refresh token descends from it; its id is the principal's `subject`. */
interface GrantFamily extends Approval {
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

interface AuthorizationCode {
  approval: Approval;
  codeChallenge: string;
  redirectUri: string;
  expiresAt: number;
  /** The family issued when the code was exchanged; a second use revokes it (OAuth 2.1 §4.1.3). */
  exchangedFamilyId?: string;
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

/** What a checked authorization request asks for. */
export interface AuthorizationRequest {
  client: RegisteredClient;
  redirectUri: string;
  codeChallenge: string;
  state?: string;
  scopes: string[];
  resource?: string;
}

/** A device's authorization request (RFC 8628), with the user code the person entered (as stored). */
export type DeviceConsentRequest = Pick<AuthorizationRequest, "client" | "scopes" | "resource"> & {
  userCode: string;
};

/** A request waiting on the consent page, bound to the browser that opened `/authorize` (or entered the code). */
export type PendingConsent = (AuthorizationRequest | DeviceConsentRequest) & {
  id: string;
  expiresAt: number;
  /** Held in an HttpOnly cookie of that browser; consent requires it. */
  browserNonce: string;
};

export function isDeviceConsent(pending: PendingConsent): pending is DeviceConsentRequest & PendingConsent {
  return "userCode" in pending;
}

export interface OAuthGrantsOptions {
  store: Store;
  now: () => number;
  accessTokenTtlSeconds: number;
  /** RFC 8707 resource identifiers this server accepts (`<base>/mcp`, `<base>/v2`). */
  resources: readonly string[];
  /** The issuer, added as `iss` to every authorization response (RFC 9207). */
  issuer: string;
  /** Default: unused registrations are forgotten after a day, at most 10 000 kept. */
  registrationLimits?: OAuthRegistrationLimits | undefined;
}

/**
 * Clients, grant families and tokens persist in the store (a data-file restart keeps sign-ins); codes and pending
 * consents stay in memory. Every grant is checked and issued here, refusals thrown as `OAuthError`.
 */
export class OAuthGrants {
  readonly #clients: StoreCollection<RegisteredClient>;
  readonly #families: StoreCollection<GrantFamily>;
  readonly #tokens: StoreCollection<TokenRecord>;
  /** Only dynamically registered clients have a record; pre-registered ones are kept for good. */
  readonly #registrations: StoreCollection<RegistrationRecord>;
  readonly #codes = new Map<string, AuthorizationCode>();
  readonly #pending = new Map<string, PendingConsent>();
  readonly #options: OAuthGrantsOptions;
  readonly #now: () => number;

  constructor(options: OAuthGrantsOptions) {
    this.#options = options;
    this.#now = options.now;
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
  saveClient(client: RegisteredClient): void {
    this.#clients.set(client.client_id, client);
  }

  /** RFC 7591 dynamic registration: kept until it expires unused or is evicted to make room. */
  registerClient(client: RegisteredClient): RegisteredClient {
    this.#options.store.batch(() => {
      this.#clients.set(client.client_id, client);
      this.#registrations.set(client.client_id, { registeredAt: this.#now() });
    });
    return client;
  }

  /**
   * Before a registration: forgets expired registrations (unused, or whose grants have all ended), then, at the
   * cap, the oldest unused ones. False when the cap is reached by clients that all hold live grants.
   */
  makeRoomForRegistration(): boolean {
    const now = this.#now();
    const max = this.#options.registrationLimits?.maxClients ?? 10_000;
    const all = this.#registrations.entries();
    const live = all.filter(([, record]) => !this.#expired(record, now));
    const unused = live
      .filter(([, record]) => record.usedAt === undefined)
      .sort(([, a], [, b]) => a.registeredAt - b.registeredAt);
    let count = live.length;
    this.#options.store.batch(() => {
      for (const [clientId, record] of all)
        if (this.#expired(record, now)) this.#forgetRegistration(clientId);
      for (const [clientId] of unused) {
        if (count < max) break;
        this.#forgetRegistration(clientId);
        count -= 1;
      }
    });
    return count < max;
  }

  /** The scopes and resource of a request, checked: `invalid_scope` or `invalid_target` otherwise. */
  checkScopesAndResource(
    scope: string | null,
    resource: string | null,
  ): { scopes: string[]; resource?: string } {
    const scopes = (scope ?? "").split(" ").filter((wanted) => wanted.length > 0);
    const unknown = scopes.filter((wanted) => !KNOWN_SCOPES.has(wanted));
    if (unknown.length > 0) throw new OAuthError("invalid_scope", `unknown scope ${unknown.join(" ")}`);
    // None requested (or only offline_access) means the chat scopes.
    if (!scopes.some((wanted) => wanted !== OFFLINE_ACCESS_SCOPE)) scopes.push(...CHAT_SCOPES);
    const unique = [...new Set(scopes)];
    return resource ? { scopes: unique, resource: this.ourResource(resource) } : { scopes: unique };
  }

  /** The canonical form of a requested resource when it is one of ours; `invalid_target` otherwise. */
  ourResource(href: string): string {
    const { resources } = this.#options;
    const match = resources.find((resource) => sameResource(resource, href));
    if (!match)
      throw new OAuthError("invalid_target", `unknown resource ${href}; use one of ${resources.join(", ")}`);
    return match;
  }

  /** Keeps the request for the consent page (at most until `notAfter`). */
  addPending(
    request: AuthorizationRequest | DeviceConsentRequest,
    browserNonce: string,
    id: string,
    notAfter = Number.POSITIVE_INFINITY,
  ): void {
    const now = this.#now();
    for (const [key, pending] of this.#pending) if (pending.expiresAt <= now) this.#pending.delete(key);
    if (this.#pending.size >= MAX_PENDING_CONSENTS)
      this.#pending.delete(this.#pending.keys().next().value ?? "");
    const expiresAt = Math.min(notAfter, now + PENDING_CONSENT_TTL_MS);
    this.#pending.set(id, { ...request, id, browserNonce, expiresAt });
  }

  /** The live pending request with this id (the consent page reads it), or undefined. */
  pendingConsent(id: string): PendingConsent | undefined {
    const pending = this.#pending.get(id);
    if (pending && pending.expiresAt <= this.#now()) {
      this.#pending.delete(id);
      return undefined;
    }
    return pending;
  }

  /** Ends a pending request (approved or denied): a consent form works once. */
  takePendingConsent(id: string): void {
    this.#pending.delete(id);
  }

  /** The client's redirect URI with a fresh one-time code (valid 60 s), the echoed state and `iss`. */
  approvedRedirect(
    approval: Approval,
    request: Pick<AuthorizationRequest, "codeChallenge" | "redirectUri" | "state">,
  ): string {
    const now = this.#now();
    for (const [hash, code] of this.#codes) if (code.expiresAt <= now) this.#codes.delete(hash);
    const code = newSecret("chat_ac_");
    const { codeChallenge, redirectUri } = request;
    const expiresAt = now + AUTHORIZATION_CODE_TTL_MS;
    this.#codes.set(hashOf(code), { approval, codeChallenge, redirectUri, expiresAt });
    return this.authorizationResponse(redirectUri, { code }, request.state);
  }

  /** An authorization response (success or error) at the redirect URI: `state` when sent, and always `iss`. */
  authorizationResponse(redirectUri: string, params: Record<string, string>, state?: string): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries({ ...params, ...(state !== undefined ? { state } : {}) }))
      url.searchParams.set(name, value);
    url.searchParams.set("iss", this.#options.issuer);
    return url.href;
  }

  /** `grant_type=authorization_code`: code, PKCE verifier, redirect URI and resource checked; a replayed code revokes. */
  exchangeCode(client: RegisteredClient, form: URLSearchParams): TokenResponseBody {
    const code = form.get("code");
    const verifier = form.get("code_verifier");
    if (!code) throw new OAuthError("invalid_request", "code is required");
    if (!verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier))
      throw new OAuthError("invalid_request", "code_verifier is required (43 to 128 unreserved characters)");
    const record = this.#codes.get(hashOf(code));
    const invalid = (why: string) => new OAuthError("invalid_grant", `authorization code ${why}`);
    if (!record) throw invalid("is invalid");
    if (record.exchangedFamilyId) {
      this.revokeFamily(record.exchangedFamilyId);
      throw invalid("was already used; the tokens issued for it are revoked");
    }
    if (record.expiresAt <= this.#now()) throw invalid("has expired");
    if (record.approval.clientId !== client.client_id) throw invalid("was issued to another client");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    if (!sameSecret(challenge, record.codeChallenge))
      throw new OAuthError("invalid_grant", "code_verifier does not match the code_challenge");
    const redirectUri = form.get("redirect_uri");
    const onlyRegistered =
      client.redirect_uris.length === 1 && client.redirect_uris[0] === record.redirectUri;
    if (redirectUri === null ? !onlyRegistered : redirectUri !== record.redirectUri)
      throw new OAuthError("invalid_grant", "redirect_uri does not match the authorization request");
    const asked = form.get("resource");
    const resource = asked ? this.ourResource(asked) : record.approval.resource;
    if (record.approval.resource && resource !== record.approval.resource)
      throw new OAuthError("invalid_target", "resource does not match the authorization request");
    const tokens = this.issue({ ...record.approval, ...(resource ? { resource } : {}) });
    record.exchangedFamilyId = tokens.familyId;
    // Kept until its expiry so a replay can be recognised and its family revoked.
    record.expiresAt = Math.max(record.expiresAt, this.#now() + AUTHORIZATION_CODE_TTL_MS);
    return tokens.body;
  }

  /** `grant_type=refresh_token`: rotation; narrower scopes and the same resource are checked before rotating. */
  refresh(client: RegisteredClient, form: URLSearchParams): TokenResponseBody {
    const refreshToken = form.get("refresh_token");
    if (!refreshToken) throw new OAuthError("invalid_request", "refresh_token is required");
    const hash = hashOf(refreshToken);
    const record = this.#tokens.get(hash);
    const family = record?.kind === "refresh" ? this.#families.get(record.familyId) : undefined;
    const invalid = (why: string) => new OAuthError("invalid_grant", `refresh token ${why}`);
    if (!record || !family || family.revoked)
      throw invalid(record?.kind === "refresh" ? "is revoked" : "is unknown");
    if (family.clientId !== client.client_id) throw invalid("is not issued to this client");
    const requested = (form.get("scope") ?? "").split(" ").filter(Boolean);
    if (requested.some((wanted) => !family.scopes.includes(wanted)))
      throw new OAuthError("invalid_scope", "a refresh cannot widen the scopes of the grant");
    const resource = form.get("resource");
    if (resource && family.resource && this.ourResource(resource) !== family.resource)
      throw new OAuthError("invalid_target", "resource does not match the grant");
    if (record.rotatedAt !== undefined) {
      this.revokeFamily(family.id);
      throw invalid("was already used; the sign-in is revoked, sign in again");
    }
    if (record.expiresAt <= this.#now()) throw invalid("is expired");
    return this.#options.store.batch(() => {
      this.#tokens.set(hash, { ...record, rotatedAt: this.#now() });
      return this.#issueTokens(family, true);
    });
  }

  /** `grant_type=client_credentials` (RFC 6749 §4.4): tokens for the account the client is registered to act for. */
  grantClientCredentials(client: RegisteredClient, form: URLSearchParams): TokenResponseBody {
    const account = client.client_credentials_account;
    if (!account)
      throw new OAuthError("unauthorized_client", "the client is not registered for client_credentials");
    const checked = this.checkScopesAndResource(form.get("scope"), form.get("resource"));
    return this.issue({ clientId: client.client_id, account, ...checked }, false).body;
  }

  /**
   * The first tokens of a new family bound to the approval (a code exchanged, a device code redeemed); without a
   * refresh token when no person approved it (client credentials, jwt-bearer: RFC 6749 §4.4.3).
   */
  issue(approval: Approval, withRefreshToken = true): { body: TokenResponseBody; familyId: string } {
    const now = this.#now();
    const family: GrantFamily = { ...approval, id: newId("grant"), createdAt: now, revoked: false };
    const body = this.#options.store.batch(() => {
      this.#families.set(family.id, family);
      const registration = this.#registrations.get(approval.clientId);
      if (registration)
        this.#registrations.set(approval.clientId, { ...registration, usedAt: registration.usedAt ?? now });
      return this.#issueTokens(family, withRefreshToken);
    });
    return { body, familyId: family.id };
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
    const family = record && this.#families.get(record.familyId);
    if (family && family.clientId === clientId) this.revokeFamily(family.id);
  }

  /** Ends a sign-in; its client's registration then lives only as long as its other grants. */
  revokeFamily(familyId: string): void {
    const family = this.#families.get(familyId);
    if (!family) return;
    this.#options.store.batch(() => {
      this.#families.set(familyId, { ...family, revoked: true });
      for (const [hash, record] of this.#tokens.entries())
        if (record.familyId === familyId) this.#tokens.delete(hash);
      const registration = this.#registrations.get(family.clientId);
      // 0 when none is left: the registration then lives out its unused time to live only.
      if (registration)
        this.#registrations.set(family.clientId, {
          ...registration,
          grantsUntil: this.#liveGrantsUntil(family.clientId),
        });
    });
  }

  #issueTokens(family: GrantFamily, withRefreshToken: boolean): TokenResponseBody {
    this.#pruneTokens();
    const now = this.#now();
    const ttl = this.#options.accessTokenTtlSeconds;
    const put = (kind: TokenRecord["kind"], prefix: string, lifetimeMs: number) => {
      const token = newSecret(prefix);
      this.#tokens.set(hashOf(token), { kind, familyId: family.id, expiresAt: now + lifetimeMs });
      return token;
    };
    const accessToken = put("access", ACCESS_TOKEN_PREFIX, ttl * 1000);
    const refreshToken = withRefreshToken ? put("refresh", "chat_rt_", REFRESH_TOKEN_TTL_MS) : undefined;
    if (refreshToken) {
      const registration = this.#registrations.get(family.clientId);
      const grantsUntil = Math.max(registration?.grantsUntil ?? 0, now + REFRESH_TOKEN_TTL_MS);
      if (registration) this.#registrations.set(family.clientId, { ...registration, grantsUntil });
    }
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ttl,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      scope: family.scopes.join(" "),
      account: family.account,
    };
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
    for (const [id, family] of this.#families.entries())
      if (!referenced.has(id) && family.createdAt + 2 * AUTHORIZATION_CODE_TTL_MS <= now)
        this.#families.delete(id);
  }

  /** The last expiry of a live refresh token of the client's live families, or 0 when none is left. */
  #liveGrantsUntil(clientId: string): number {
    let until = 0;
    for (const record of this.#tokens.values()) {
      if (record.kind !== "refresh" || record.rotatedAt !== undefined || record.expiresAt <= this.#now())
        continue;
      const family = this.#families.get(record.familyId);
      if (family && !family.revoked && family.clientId === clientId)
        until = Math.max(until, record.expiresAt);
    }
    return until;
  }

  /** Unused past its time to live, or used and every grant it held has ended (expired or revoked). */
  #expired(record: RegistrationRecord, now: number): boolean {
    const unusedUntil =
      record.registeredAt + (this.#options.registrationLimits?.unusedTtlSeconds ?? 86_400) * 1000;
    if (record.usedAt === undefined) return unusedUntil <= now;
    // Records from before `grantsUntil` was kept: the longest a refresh token could live after first use.
    return Math.max(unusedUntil, record.grantsUntil ?? record.usedAt + REFRESH_TOKEN_TTL_MS) <= now;
  }

  /** Forgets a dynamic registration with everything it was granted. */
  #forgetRegistration(clientId: string): void {
    this.#options.store.batch(() => {
      this.#registrations.delete(clientId);
      this.#clients.delete(clientId);
      const families = new Set<string>();
      for (const [id, family] of this.#families.entries()) {
        if (family.clientId !== clientId) continue;
        families.add(id);
        this.#families.delete(id);
      }
      if (families.size === 0) return;
      for (const [hash, record] of this.#tokens.entries())
        if (families.has(record.familyId)) this.#tokens.delete(hash);
    });
  }
}

/** Two resource identifiers are one when they differ only by trailing slashes. */
export function sameResource(a: string, b: string): boolean {
  return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}

export function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}
