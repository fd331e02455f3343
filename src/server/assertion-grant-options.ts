/** Options of the jwt-bearer grant (RFC 7523 §2.1): trusted workload issuers, trusted enterprise IdPs, and the reference IdP. */

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
