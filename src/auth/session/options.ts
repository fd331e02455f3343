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
  /** `--device-code` (RFC 8628); without it, used anyway when no browser can open and the server offers it. */
  deviceCode?: boolean;
  /** Default 300 000. */
  authTimeoutMs?: number;
  /** A pre-registered client; its secret (if any) comes from `$CHAT_MCP_CLIENT_SECRET`, read by the caller. */
  clientId?: string;
  clientSecret?: string;
  /** `--client-credentials`: the grant as `clientId`, with `clientSecret` or `privateKey` (`private_key_jwt`). */
  clientCredentials?: { privateKey?: ClientPrivateKey | undefined };
  /** `--workload-token-file`: the jwt-bearer grant (RFC 7523 §2.1) as `clientId` with the token a platform writes there. */
  workloadIdentity?: { tokenFile: string };
  /** `--idp-issuer`, `--idp-client-id`, `--idp-id-token-file`: the ID token exchanged for an ID-JAG, redeemed as `clientId`. */
  enterpriseIdentity?: {
    idpIssuer: string;
    idpClientId: string;
    idTokenFile: string;
    idpClientSecret?: string;
  };
  /** DPoP-bound tokens (RFC 9449) where offered: the bridge's; chat-cli's `/v2` client presents Bearer tokens only. */
  dpop?: boolean | undefined;
  /** A client ID metadata document (https URL), used where the authorization server supports it. */
  clientMetadataUrl?: string;
  /** `--authorize-param`: extra parameters a provider needs (Auth0's `audience`); protocol ones are refused. */
  authorizeParams?: Record<string, string>;
  /** `--disable-resource-parameter`: no RFC 8707 `resource` in any request, for providers that refuse it (Entra ID). */
  disableResourceParameter?: boolean;
  /** `--static-oauth-client-metadata`: RFC 7591 metadata merged over the registration's, save the protocol's fields. */
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
   * The bridge: when the sign-in cannot finish by itself (no browser opened, a device code to enter), `recover()`
   * rejects at once with SignInWaitingError instead of waiting out `authTimeoutMs`; the sign-in goes on in the
   * background, and later calls get the same error until it ends. `login` commands keep waiting instead.
   */
  answerAtOnceWhenWaiting?: boolean;
  /** The command that signs in from a terminal, for the messages above (e.g. `chat-mcp-bridge login <url>`). */
  loginCommand?: string;
  /** Environment for the browser opener (`$BROWSER`) and the proxy variables; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Told each time a sign-in shows the person where to go, so a bridge can show it in its MCP client too. */
  onSignInPrompt?: (prompt: SignInPrompt) => void;
  /**
   * A person's sign-in run in another process that outlives this one (`signInFor` there), telling each prompt;
   * resolves once the login is stored. The bridge's, so that a one-shot host that stops it keeps the sign-in.
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
