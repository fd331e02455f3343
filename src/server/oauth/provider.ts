/** The authorization flows on our grants: pending requests (consent or auto-approve), code and refresh exchange, revoke. */
import { createHash, randomUUID } from "node:crypto";
import { sameSecret } from "../ids.js";
import type { Approval, CodeLookup, IssuedTokens, OAuthGrants } from "./grants.js";
import type { RegisteredClient } from "./registration.js";

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

  newPendingId(): string {
    return randomUUID();
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

  revokeToken(client: RegisteredClient, token: string): void {
    this.#options.grants.revokeToken(token, client.client_id);
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
