/** What an OAuthSession is built from and what it tells: its options, a resource's challenge, sign-in and stored-login summaries. */

import type { ClientPrivateKey } from "../client-key.js";
import type { AuthLog } from "../login-store.js";
import type { StoredClient } from "../stored-login.js";

export interface OAuthSessionOptions {
  /** The protected resource URL (MCP URL for the bridge, `restServerUrl(baseUrl)` for chat-cli). */
  serverUrl: string;
  /** Default auto: keytar, then @napi-rs/keyring (Secret Service on Linux), else a 0600 file. */
  tokenStore?: "auto" | "keychain" | "file";
  /** Default `configDir()` from src/config. */
  configDir?: string;
  /** Custom header names (never values): part of the storage key. */
  headerNames?: string[];
  /** `--profile`: a separate login (key, lock) for the same URL; absent or "default" is the login without one. */
  profile?: string;
  /** `--resource`: the RFC 8707 resource to ask for when the protected resource is not the server URL. */
  resource?: string;
  /** `--host`: the loopback callback's host name, "127.0.0.1" (default) or "localhost" (both loopback families). */
  callbackHost?: string;
  /** `--callback-port`: used as given, a busy one is an error. Default: derived from the server URL in 20000-29999, or an ephemeral port when taken. */
  callbackPort?: number;
  /** `--callback-path`: the redirect URI's path on the loopback callback (default `/callback`). */
  callbackPath?: string | undefined;
  /** `--auth-success-url`: the http(s) page the browser is sent to after a successful sign-in, instead of ours. */
  authSuccessUrl?: string | undefined;
  /** `--use-id-token`: the token response's OIDC ID token is the bearer (refused when the response has none). */
  useIdToken?: boolean | undefined;
  /** False (`--no-browser`): print the URL on stderr only. */
  openBrowser?: boolean;
  /**
   * `--device-code`: sign in with a device code (RFC 8628) instead of a browser on this machine. Without it the
   * device code is still used when no browser can be opened and the authorization server offers it.
   */
  deviceCode?: boolean;
  /** Default 300 000. */
  authTimeoutMs?: number;
  /** A pre-registered client; its secret (if any) comes from `$CHAT_MCP_CLIENT_SECRET`, read by the caller. */
  clientId?: string;
  clientSecret?: string;
  /**
   * `--client-credentials`: sign in with the `client_credentials` grant as `clientId` (no browser, no person):
   * with `clientSecret`, or with `privateKey` (`private_key_jwt`). A new token is asked for when one is due.
   */
  clientCredentials?: { privateKey?: ClientPrivateKey | undefined };
  /**
   * `--workload-token-file`: the jwt-bearer grant (RFC 7523 §2.1) as `clientId` with the token a platform writes
   * to this file (read again for each token request, since platforms rotate it). No browser, no person.
   */
  workloadIdentity?: { tokenFile: string };
  /**
   * `--idp-issuer`, `--idp-client-id`, `--idp-id-token-file` (enterprise-managed authorization): the ID token is
   * exchanged at the IdP for an ID-JAG (RFC 8693), which is redeemed as `clientId` (jwt-bearer). No consent page.
   */
  enterpriseIdentity?: {
    idpIssuer: string;
    idpClientId: string;
    idTokenFile: string;
    idpClientSecret?: string;
  };
  /**
   * Ask for DPoP-bound tokens (RFC 9449) when the authorization server offers them. The bridge does; chat-cli's
   * `/v2` client presents Bearer tokens only, so its logins leave this off.
   */
  dpop?: boolean | undefined;
  /** A client ID metadata document (https URL), used where the authorization server supports it. */
  clientMetadataUrl?: string;
  /**
   * `--authorize-param`: extra authorization request parameters a provider needs (Auth0's `audience`, `prompt`,
   * an IdP hint); a protocol parameter (`state`, `redirect_uri`, `scope`...) is refused.
   */
  authorizeParams?: Record<string, string>;
  /**
   * `--disable-resource-parameter`: no RFC 8707 `resource` in the authorization, token and refresh requests, for
   * providers that refuse it (Entra ID); the tokens are then not bound to this resource.
   */
  disableResourceParameter?: boolean;
  /**
   * `--static-oauth-client-metadata`: RFC 7591 metadata merged over the registration's (`client_name`, `scope`,
   * `logo_uri`...); the redirect, grant and response types and auth method stay as the sign-in needs them.
   */
  clientMetadata?: Record<string, unknown>;
  /** Allow plain http for non-loopback URLs. */
  allowHttp?: boolean;
  /** Default: the platform fetch, through the proxy that HTTPS_PROXY/HTTP_PROXY/NO_PROXY in `env` choose. */
  fetch?: typeof fetch;
  /** Diagnostics; never receives tokens, codes, verifiers, secrets or header values. */
  log?: AuthLog;
  /** `client_name` sent at registration: "chat-mcp-bridge" or "chat-cli". */
  clientName?: string;
  /**
   * The bridge: when the sign-in cannot finish by itself (no browser opened, the opener dropped the cookie, a
   * device code to enter),
   * `recover()` rejects at once with SignInWaitingError (the URL and what to do) instead of waiting out
   * `authTimeoutMs`; the sign-in goes on waiting in the background, and later calls get the same error until it
   * ends. `login` commands leave this off: the terminal shows the URL and they keep waiting.
   */
  answerAtOnceWhenWaiting?: boolean;
  /** The command that signs in from a terminal, for the messages above (e.g. `chat-mcp-bridge login <url>`). */
  loginCommand?: string;
  /** Environment for the browser opener (`$BROWSER`) and the proxy variables; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Told each time a sign-in shows the person where to go (a browser opened on it, or the URL they must open
   * themselves), so a bridge can show it in its MCP client too.
   */
  onSignInPrompt?: (prompt: SignInPrompt) => void;
  /**
   * A person's sign-in (a browser or a device code) run in another process that outlives this one: it takes the
   * login lock itself, signs in unless a login was stored meanwhile, stores it, and tells each prompt. Resolves
   * once the login is stored; rejects with AuthRequiredError. The bridge sets it, so that a one-shot host that
   * stops the bridge does not take the sign-in down with it.
   */
  signInElsewhere?: (request: SignInRequest, prompt: (prompt: SignInPrompt) => void) => Promise<void>;
}

/** One sign-in asked for by a refused token: the scope the challenge asked for, and what it refused. */
export interface SignInRequest {
  challengeScope?: string | undefined;
  /** Step-up: the scope the current tokens already have, kept in the new request. */
  alreadyGranted?: string | undefined;
  resourceMetadataUrl?: string | undefined;
  /** The token the server refused: a login stored with another one meanwhile is used instead of signing in. */
  rejectedToken?: string | undefined;
}

/** Where a sign-in in progress asks the person to go: a one-time loopback URL, or a verification page. */
export interface SignInPrompt {
  url: string;
  /** What to tell the person, in one sentence or two, naming the URL. */
  message: string;
  /** True when a browser was opened on `url` already: opening it again would spend the one-time page. */
  browserOpened: boolean;
}

/** A challenge from the resource: the status and `WWW-Authenticate` value, and optionally the token it refused. */
export interface AuthChallenge {
  status: number;
  wwwAuthenticate: string | null;
  /** The access token that got the 401/403; defaults to the last one this session handed out. */
  rejectedToken?: string;
}

export interface SignInSummary {
  scope?: string;
  expiresAt?: number;
  storedIn: "keychain" | "file";
}

/** A stored login as `describeLogin` tells it: no token, code or secret. */
export interface StoredLoginSummary {
  authorizationServerUrl: string;
  resource?: string | undefined;
  clientSource?: StoredClient["source"] | undefined;
  /** False when only a client registration is stored (the tokens were dropped, or sign-in never finished). */
  signedIn: boolean;
  scope?: string | undefined;
  expiresAt?: number | undefined;
  refreshable: boolean;
  /** Slug of the account or team the tokens act for, when the token response named it. */
  account?: string | undefined;
  /** True when the tokens are DPoP-bound (RFC 9449) to the key stored with the login. */
  dpopBound?: boolean | undefined;
}

/** How long a sign-in waits for the browser unless `authTimeoutMs` says otherwise. */
export const DEFAULT_AUTH_TIMEOUT_MS = 300_000;
