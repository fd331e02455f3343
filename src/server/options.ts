/** Options of `startReferenceServer()`: plain data, free of express types so `chat-mcp-bridge/server` types stand alone. */

/** A client known before any registration (e.g. for `chat-mcp-bridge --client-id`). */
export interface PreRegisteredOAuthClient {
  client_id: string;
  /** Absent for a public client; with it the client authenticates by `client_secret_basic` or `client_secret_post`. */
  client_secret?: string;
  /**
   * Public keys (RFC 7591 `jwks`: RSA, P-256 or Ed25519 JWKs) for `private_key_jwt` (RFC 7523 §2.2): the client
   * authenticates with an assertion signed by the private half instead of a secret.
   */
  jwks?: { keys: JsonWebKey[] };
  /** Where a browser sign-in returns; none for a client that only uses the `client_credentials` grant. */
  redirect_uris?: string[];
  client_name?: string;
  /**
   * Account or team slug the `client_credentials` grant acts for: with it, this confidential client (secret or
   * `jwks`) may get tokens with no person present.
   */
  client_credentials_account?: string;
}

/** Options of the OAuth part, read from `ctx.options` (they belong in `ReferenceServerOptions`). */
export interface OAuthServerOptions extends AssertionGrantOptions {
  /** Account or team slug whose authorization requests are approved without the consent page (headless tests). */
  autoApprove?: string;
  /** Lifetime of OAuth access tokens in seconds (short values for refresh tests). */
  accessTokenTtlSeconds?: number;
  /** Clients registered at start, in addition to dynamic registration. */
  oauthClients?: PreRegisteredOAuthClient[];
  /** Clock (ms since epoch) for codes, tokens, registrations and the OAuth rate limits, so tests need not wait. */
  oauthNow?: () => number;
  /**
   * Per-client-IP token buckets on `/authorize`, `/token` and `/register`; `false` turns them all off, `false` for
   * one endpoint turns off that one. Default: generous (see `DEFAULT_OAUTH_RATE_LIMITS`).
   */
  oauthRateLimit?: OAuthRateLimits | false;
  /** Bounds on dynamically registered clients. Default: unused ones expire after 24 h, at most 10 000 kept. */
  oauthRegistrationLimits?: OAuthRegistrationLimits;
  /**
   * The device authorization grant (RFC 8628). Default: offered; codes live 600 s, clients poll every 5 s, 1000
   * pending. `false` leaves it out (metadata, endpoints and grant), as a server without it, for testing clients.
   */
  deviceAuthorization?: DeviceAuthorizationOptions | false;
  /**
   * DPoP (RFC 9449). `"allowed"` (default): advertised in the metadata; a token request with a `DPoP` proof gets
   * `token_type: "DPoP"` tokens bound to its key, one without gets Bearer tokens. `"required"`: every token request
   * needs a proof, and `/mcp` and `/v2` refuse unbound OAuth tokens (API keys still work on `/v2`). `"off"`: not
   * advertised, the header is ignored. Bound tokens are always checked (scheme, proof, key, replay).
   */
  dpop?: DpopMode;
  /**
   * Server nonces in DPoP proofs (RFC 9449 §8, §9): `"everywhere"` (default) at `/token`, `/mcp` and `/v2`,
   * `"token-endpoint"` at `/token` only, `"off"` never. With nonces, a replay ledger that fills up retires them (the
   * proofs carrying them can then never be accepted, so their entries go) and asks clients for the new one; without,
   * it can only refuse new proofs (429) until old ones leave the `iat` window.
   */
  dpopNonces?: DpopNonceMode;
  /**
   * How many used DPoP proofs the server remembers per key (each until its `iat` leaves the window); default
   * 20 000. A proof is never forgotten while it could still be accepted; a full key waits, no other key does.
   */
  dpopReplayLimits?: DpopReplayLimits;
  /** Tests only: client ID metadata documents may be served over plain http from a loopback host. */
  testOnlyAllowHttpClientMetadataDocuments?: boolean;
}

/** The bound on the DPoP proofs remembered per key (`jkt`). */
export interface DpopReplayLimits {
  /** Proofs of one key remembered at once (default 20 000). */
  perKey?: number;
}

/** Whether the authorization server offers DPoP-bound tokens, and whether it insists on them. */
export type DpopMode = "off" | "allowed" | "required";
/** Where DPoP proofs must carry a server nonce. */
export type DpopNonceMode = "off" | "token-endpoint" | "everywhere";

export interface DeviceAuthorizationOptions {
  /** How long a device code and its user code live (`expires_in`). */
  lifetimeSeconds?: number;
  /** The polling interval asked of clients (`interval`); each `slow_down` adds 5 s for that client. */
  intervalSeconds?: number;
  /** Most device authorizations held at once; at the cap the oldest is forgotten. */
  maxPending?: number;
  /**
   * Codes one browser session at one address may enter on the verification page (`/device`) in 15 minutes, given back
   * gradually (default 10): guessing user codes is the attack on that page (RFC 8628 §5.1); past it, 429.
   */
  maxUserCodeAttempts?: number;
}

/** A token bucket per OAuth endpoint; an endpoint left out keeps its default. */
export interface OAuthRateLimits {
  authorize?: RateLimitOptions | false;
  token?: RateLimitOptions | false;
  register?: RateLimitOptions | false;
}

export interface OAuthRegistrationLimits {
  /** A dynamically registered client never used for a grant is forgotten after this many seconds. */
  unusedTtlSeconds?: number;
  /** Most dynamically registered clients kept; at the cap the oldest unused one makes room for a new one. */
  maxClients?: number;
}

/** Which MCP protocol eras `/mcp` serves: 2026-07-28 statelessly, 2025-era with sessions, or both at once. */
export type McpEra = "both" | "modern" | "legacy";

export interface McpEndpointOptions {
  /**
   * `"both"` (default) serves MCP 2026-07-28 statelessly and 2025-11-25 (and older) with sessions at once;
   * `"modern"` or `"legacy"` restricts `/mcp` to one era, for testing clients against each.
   */
  mcpEra?: McpEra;
  /** A session with no request and no open stream for this long is closed (default 30 minutes). */
  mcpSessionIdleMs?: number;
  /**
   * Sessions one credential (OAuth grant) may hold (default 32): past it, its least recently used idle session is
   * closed, and with none idle a new `initialize` gets 429.
   */
  mcpMaxSessionsPerCredential?: number;
  /** Legacy sessions one person may hold across all their grants and clients (default 64). */
  mcpMaxSessionsPerUser?: number;
  /** Legacy sessions one person may hold through one client, across its grants (default 32). */
  mcpMaxSessionsPerClient?: number;
  /** Hostnames accepted in `Host`/`Origin` besides localhost, 127.0.0.1, [::1] and the base URL's host. */
  mcpAllowedHosts?: string[];
  /**
   * TEST ONLY, never for real use: requests to `/mcp` without an `Authorization` header act as this account or
   * team, so the official conformance suite (which cannot sign in) can reach the tools. Off by default.
   */
  testOnlyUnauthenticatedMcpAccount?: string;
}

export interface ReferenceServerOptions extends OAuthServerOptions, McpEndpointOptions {
  /** Port to listen on; 0 (default) picks a free one. `chat-cli serve` passes 8787. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1 (loopback only). */
  host?: string;
  /** JSON file that holds all state (chats, API keys, OAuth collections, SSO); absent keeps it in memory. */
  dataFile?: string;
  /** Per-credential token bucket on `/v2` and `/mcp`; `false` turns it off. Default: generous (1000 burst, 100/s). */
  rateLimit?: RateLimitOptions | false;
  /** Milliseconds the scripted assistant takes before each reply (create, send, resolve): for tests of long waits. */
  assistantDelayMs?: number;
  /** Base URL used in links when it differs from the listening address (e.g. behind a proxy); no trailing slash. */
  publicUrl?: string;
}

export interface RateLimitOptions {
  /** Bucket size: requests allowed in a burst. */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

/**
 * An issuer of workload identity tokens (a Kubernetes cluster's service-account tokens, a CI platform's OIDC
 * tokens) whose JWTs the jwt-bearer grant takes, each acting for one account or team.
 */
export interface TrustedWorkloadIssuer {
  /** The `iss` of its tokens, exactly. */
  issuer: string;
  /** Its public signing keys (RSA, P-256 or Ed25519 JWKs). */
  jwks: { keys: JsonWebKey[] };
  /**
   * The `aud` its tokens must carry (one of them). Default: this server's issuer URL (with or without the
   * trailing slash) or its token endpoint, as RFC 7523 §3 says.
   */
  audience?: string | string[];
  /** The account or team slug the tokens act for. */
  account: string;
  /** When given, only these `sub`s (e.g. `system:serviceaccount:ci:deployer`) are taken. */
  subjects?: string[];
}

/**
 * An enterprise identity provider whose identity assertion authorization grants (ID-JAGs, `typ`
 * `oauth-id-jag+jwt`, SEP-990) the jwt-bearer grant redeems for the client the ID-JAG names.
 */
export interface TrustedEnterpriseIdp {
  issuer: string;
  jwks: { keys: JsonWebKey[] };
  /** The account or team slug the IdP's people act for here. */
  account: string;
}

/**
 * The reference server plays an enterprise IdP at `<base>/idp` (for local tests of enterprise-managed
 * authorization): it hands out ID tokens to holders of the account's dev API key (`POST /idp/id-token`) and
 * exchanges its ID tokens for ID-JAGs (RFC 8693 token exchange at `/idp/token`), which this server redeems.
 */
export interface ReferenceIdpOptions {
  /** The client at the IdP (`--idp-client-id`); the ID tokens are issued to it (`aud`). */
  clientId: string;
  /** Its secret (`$CHAT_MCP_IDP_CLIENT_SECRET`); absent for a public client. */
  clientSecret?: string;
  /** The account or team whose people the IdP signs in (its dev API key gets ID tokens). */
  account: string;
  /** The client the ID-JAGs are for at this server (their `client_id`); default `clientId`. */
  mcpClientId?: string;
}

/** What the reference server's jwt-bearer grant trusts, as `startReferenceServer` takes it. */
export interface AssertionGrantOptions {
  /** Workload identity: issuers whose JWTs the jwt-bearer grant takes (RFC 7523 §2.1). */
  trustedWorkloadIssuers?: TrustedWorkloadIssuer[];
  /** Enterprise-managed authorization: IdPs whose ID-JAGs the jwt-bearer grant redeems. */
  trustedEnterpriseIdps?: TrustedEnterpriseIdp[];
  /** Plays an enterprise IdP at `<base>/idp` whose ID-JAGs this server redeems too. */
  referenceIdp?: ReferenceIdpOptions;
}
