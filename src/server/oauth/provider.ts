/** The MCP SDK's OAuthServerProvider, implemented on our grants: authorize (consent or auto-approve), code and refresh exchange, revoke. */
import { randomUUID } from "node:crypto";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import {
  InvalidGrantError,
  InvalidScopeError,
  InvalidTargetError,
  InvalidTokenError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Response } from "express";
import type { ConsentBrowserBinding } from "./browser-binding.js";
import type { Approval, CodeLookup, IssuedTokens, OAuthGrants } from "./grants.js";

/** Scopes of this server: read and write chats; `offline_access` is accepted (refresh tokens are always issued). */
export const CHAT_SCOPES = ["chat:read", "chat:write"] as const;
export const OFFLINE_ACCESS_SCOPE = "offline_access";
const KNOWN_SCOPES = new Set<string>([...CHAT_SCOPES, OFFLINE_ACCESS_SCOPE]);
export const PENDING_AUTHORIZATION_TTL_MS = 10 * 60 * 1000;

/** An authorization request waiting on the consent page. */
export interface PendingAuthorization {
  id: string;
  client: OAuthClientInformationFull;
  redirectUri: string;
  codeChallenge: string;
  state?: string;
  scopes: string[];
  resource?: string;
  expiresAt: number;
  /** Held in an HttpOnly cookie of the browser that opened `/authorize`; the consent page requires it. */
  browserNonce: string;
}

export interface ReferenceOAuthProviderOptions {
  grants: OAuthGrants;
  /** RFC 8707 resource identifiers this server accepts (`<base>/mcp`, `<base>/v2`). */
  resources: readonly string[];
  now: () => number;
  /** When set, requests are approved for this account at once (no consent page). */
  autoApprove?: { account: string; userId?: string };
  /** Path of the consent page; the pending request id is appended as `?request=`. */
  consentPath: string;
  /** Ties each pending request to the browser that started it (against consent phishing). */
  browserBinding: ConsentBrowserBinding;
}

export class ReferenceOAuthProvider implements OAuthServerProvider {
  readonly #options: ReferenceOAuthProviderOptions;
  readonly #pending = new Map<string, PendingAuthorization>();

  constructor(options: ReferenceOAuthProviderOptions) {
    this.#options = options;
  }

  get clientsStore(): OAuthRegisteredClientsStore {
    const grants = this.#options.grants;
    return {
      getClient: (clientId) => grants.getClient(clientId),
      registerClient: (client) => grants.registerClient(client as OAuthClientInformationFull),
    };
  }

  async authorize(
    client: OAuthClientInformationFull,
    params: AuthorizationParams,
    res: Response,
  ): Promise<void> {
    const resource = params.resource ? this.#ourResource(params.resource.href) : undefined;
    const scopes = grantedScopes(params.scopes);
    const auto = this.#options.autoApprove;
    if (auto) {
      const approval: Approval = {
        clientId: client.client_id,
        account: auto.account,
        scopes,
        ...(auto.userId ? { userId: auto.userId } : {}),
        ...(resource ? { resource } : {}),
      };
      res.redirect(
        302,
        this.approvedRedirect(approval, params.codeChallenge, params.redirectUri, params.state),
      );
      return;
    }
    this.#prunePending();
    const id = randomUUID();
    this.#pending.set(id, {
      id,
      client,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      scopes,
      expiresAt: this.#options.now() + PENDING_AUTHORIZATION_TTL_MS,
      browserNonce: this.#options.browserBinding.bind(res, id),
      ...(params.state !== undefined ? { state: params.state } : {}),
      ...(resource ? { resource } : {}),
    });
    res.redirect(302, `${this.#options.consentPath}?request=${encodeURIComponent(id)}`);
  }

  /** The live pending request with this id (the consent page reads it), or undefined. */
  pendingAuthorization(id: string): PendingAuthorization | undefined {
    const pending = this.#pending.get(id);
    if (pending && pending.expiresAt <= this.#options.now()) {
      this.#pending.delete(id);
      return undefined;
    }
    return pending;
  }

  /** Ends a pending request (approved or denied): a consent form works once. */
  takePendingAuthorization(id: string): PendingAuthorization | undefined {
    const pending = this.pendingAuthorization(id);
    this.#pending.delete(id);
    return pending;
  }

  /** The client's redirect URI with a fresh code and the echoed state. */
  approvedRedirect(approval: Approval, codeChallenge: string, redirectUri: string, state?: string): string {
    const code = this.#options.grants.issueCode(approval, codeChallenge, redirectUri);
    return redirectWith(redirectUri, { code, ...(state !== undefined ? { state } : {}) });
  }

  async challengeForAuthorizationCode(
    client: OAuthClientInformationFull,
    authorizationCode: string,
  ): Promise<string> {
    return codeOrThrow(this.#options.grants.lookupCode(authorizationCode, client.client_id)).codeChallenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    authorizationCode: string,
    _codeVerifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const grants = this.#options.grants;
    const code = codeOrThrow(grants.lookupCode(authorizationCode, client.client_id));
    const singleRegistered =
      client.redirect_uris.length === 1 && client.redirect_uris[0] === code.redirectUri;
    if (redirectUri === undefined ? !singleRegistered : redirectUri !== code.redirectUri) {
      throw new InvalidGrantError("redirect_uri does not match the authorization request");
    }
    let boundResource = code.resource;
    if (resource) {
      const requested = this.#ourResource(resource.href);
      if (boundResource && requested !== boundResource) {
        throw new InvalidTargetError("resource does not match the authorization request");
      }
      boundResource = requested;
    }
    const approval: Approval = {
      clientId: code.clientId,
      account: code.account,
      scopes: code.scopes,
      ...(code.userId ? { userId: code.userId } : {}),
      ...(boundResource ? { resource: boundResource } : {}),
    };
    return tokenResponse(grants.exchangeCode(authorizationCode, approval));
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    const grants = this.#options.grants;
    const outcome = grants.refresh(refreshToken, client.client_id);
    if (!outcome.ok) {
      throw new InvalidGrantError(
        outcome.reason === "reused"
          ? "refresh token was already used; the sign-in is revoked, sign in again"
          : `refresh token is ${outcome.reason === "other-client" ? "not issued to this client" : outcome.reason}`,
      );
    }
    const family = outcome.tokens.family;
    if (scopes?.some((scope) => !family.scopes.includes(scope))) {
      throw new InvalidScopeError("a refresh cannot widen the scopes of the grant");
    }
    if (resource && family.resource && this.#ourResource(resource.href) !== family.resource) {
      throw new InvalidTargetError("resource does not match the grant");
    }
    return tokenResponse(outcome.tokens);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const principal = this.#options.grants.principalFor(token);
    if (!principal) throw new InvalidTokenError("The access token is invalid, expired or revoked");
    return {
      token,
      clientId: principal.clientId ?? "",
      scopes: principal.scopes,
      ...(principal.expiresAt !== undefined ? { expiresAt: principal.expiresAt } : {}),
      ...(principal.resource ? { resource: new URL(principal.resource) } : {}),
      extra: { principal },
    };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    this.#options.grants.revokeToken(request.token, client.client_id);
  }

  /** The canonical form of a requested resource when it is one of ours; `invalid_target` otherwise. */
  #ourResource(href: string): string {
    const wanted = withoutTrailingSlash(href);
    const match = this.#options.resources.find((resource) => withoutTrailingSlash(resource) === wanted);
    if (!match)
      throw new InvalidTargetError(
        `unknown resource ${href}; use one of ${this.#options.resources.join(", ")}`,
      );
    return match;
  }

  #prunePending(): void {
    const now = this.#options.now();
    for (const [id, pending] of this.#pending) if (pending.expiresAt <= now) this.#pending.delete(id);
  }
}

/** The requested scopes when all are known; none requested means the chat scopes. */
function grantedScopes(requested: string[] | undefined): string[] {
  const scopes = (requested ?? []).filter((scope) => scope.length > 0);
  const unknown = scopes.filter((scope) => !KNOWN_SCOPES.has(scope));
  if (unknown.length > 0) throw new InvalidScopeError(`unknown scope ${unknown.join(" ")}`);
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
  throw new InvalidGrantError(why);
}

function tokenResponse(tokens: IssuedTokens): OAuthTokens {
  return {
    access_token: tokens.accessToken,
    token_type: "Bearer",
    expires_in: tokens.expiresIn,
    refresh_token: tokens.refreshToken,
    scope: tokens.family.scopes.join(" "),
  };
}

export function redirectWith(redirectUri: string, params: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.href;
}

function withoutTrailingSlash(value: string): string {
  return value.replace(/\/+$/, "");
}
