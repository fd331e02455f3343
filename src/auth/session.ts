/** OAuthSession: one login to one protected resource, kept fresh across processes (sign-in, refresh, step-up, sign-out). */
import { createHash, randomBytes } from "node:crypto";
import type { OAuthTokens } from "@modelcontextprotocol/client";
import { configDir as defaultConfigDir } from "../config/index.js";
import { proxyAwareFetch } from "../internal/proxy.js";
import { redactForTerminal, rememberSecret } from "../internal/redact.js";
import { classifyRequestFailure } from "../internal/request-failure.js";
import { assertSecureUrl, coversScope, isHttpsUrlWithPath, parseBearerChallenge } from "./checks.js";
import type { DiscoveredServer } from "./discovery.js";
import { AuthRequiredError, SignInWaitingError, TokenStoreError, UnsafeUrlError } from "./errors.js";
import { canonicalServerUrl, loginKey, loginPaths } from "./login-key.js";
import { withFileLock } from "./login-lock.js";
import { waitingMessage } from "./sign-in-prompt.js";
import type { StoredClient, StoredLogin } from "./stored-login.js";
import { accountRecordingFetch } from "./token-account.js";
import { isDue, isExpired, toStoredTokens } from "./token-lifetime.js";
import { type AuthLog, LoginStore } from "./token-store.js";

// Reading a stored login is the common path (every bridge start); it loads none of the SDK, zod or http server.
const loadFlows = () => import("./session-flows.js");

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
  /** False (`--no-browser`): print the URL on stderr only. */
  openBrowser?: boolean;
  /** Default 300 000. */
  authTimeoutMs?: number;
  /** A pre-registered client; its secret (if any) comes from `$CHAT_MCP_CLIENT_SECRET`, read by the caller. */
  clientId?: string;
  clientSecret?: string;
  /** A client ID metadata document (https URL), used where the authorization server supports it. */
  clientMetadataUrl?: string;
  /** Allow plain http for non-loopback URLs. */
  allowHttp?: boolean;
  /** Default: the platform fetch, through the proxy that HTTPS_PROXY/HTTP_PROXY/NO_PROXY in `env` choose. */
  fetch?: typeof fetch;
  /** Diagnostics; never receives tokens, codes, verifiers, secrets or header values. */
  log?: AuthLog;
  /** `client_name` sent at registration: "chat-mcp-bridge" or "chat-cli". */
  clientName?: string;
  /**
   * The bridge: when the sign-in cannot finish by itself (no browser opened, the opener dropped the cookie),
   * `recover()` rejects at once with SignInWaitingError (the URL and what to do) instead of waiting out
   * `authTimeoutMs`; the sign-in goes on waiting in the background, and later calls get the same error until it
   * ends. `login` commands leave this off: the terminal shows the URL and they keep waiting.
   */
  answerAtOnceWhenWaiting?: boolean;
  /** The command that signs in from a terminal, for the messages above (e.g. `chat-mcp-bridge login <url>`). */
  loginCommand?: string;
  /** Environment for the browser opener (`$BROWSER`) and the proxy variables; default `process.env`. */
  env?: NodeJS.ProcessEnv;
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
}

const DEFAULT_AUTH_TIMEOUT_MS = 300_000;

export class OAuthSession {
  readonly serverUrl: string;
  readonly #options: OAuthSessionOptions;
  readonly #fetch: typeof fetch;
  readonly #log: AuthLog;
  readonly #store: LoginStore;
  readonly #lockPath: string;
  readonly #authTimeoutMs: number;
  #login?: StoredLogin;
  #discovered?: { key: string; value: Promise<DiscoveredServer> };
  #lastStoredIn?: "keychain" | "file";
  /** The sign-in in progress is waiting for the user (see `answerAtOnceWhenWaiting`). */
  #waiting?: SignInWaitingError;
  /** Rejects the `recover()` call that started the sign-in in progress, when that waits for the user. */
  #raiseWaiting?: (error: SignInWaitingError) => void;

  constructor(options: OAuthSessionOptions) {
    this.#options = options;
    this.#log = options.log ?? (() => {});
    // Discovery, registration, token and revocation calls honour the proxy variables like every other request.
    this.#fetch = options.fetch ?? proxyAwareFetch({ env: options.env });
    this.#authTimeoutMs = options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS;
    rememberSecret(options.clientSecret);
    assertSecureUrl(options.serverUrl, "server URL", options.allowHttp);
    if (options.clientMetadataUrl && !isHttpsUrlWithPath(options.clientMetadataUrl)) {
      throw new UnsafeUrlError("The client metadata URL must be an https URL with a path.");
    }
    this.serverUrl = canonicalServerUrl(options.serverUrl);
    const key = loginKey(this.serverUrl, options.headerNames, {
      profile: options.profile,
      resource: options.resource,
    });
    const paths = loginPaths(options.configDir ?? defaultConfigDir(), key);
    this.#lockPath = paths.lock;
    this.#store = new LoginStore(options.tokenStore ?? "auto", key, paths, this.#log);
  }

  /** A usable access token, refreshed ahead of expiry under the lock; undefined when never signed in. Never opens a browser. */
  async accessToken(): Promise<string | undefined> {
    // The store is read again only when the token in memory is missing or due, or another process saved a new
    // login (seen from file metadata alone), so most calls read no file and never the keychain.
    let tokens = this.#login?.tokens;
    if (!tokens || isDue(tokens) || (await this.#store.changedSinceSeen()))
      tokens = (await this.#reload())?.tokens;
    if (!tokens) return undefined;
    if (!isDue(tokens)) return tokens.accessToken;
    if (!tokens.refreshToken) return isExpired(tokens) ? undefined : tokens.accessToken;
    try {
      return await this.#locked(async () => {
        const login = await this.#reload();
        // Another process may have refreshed while this one waited for the lock.
        if (!login?.tokens || !isDue(login.tokens) || !login.tokens.refreshToken)
          return login?.tokens?.accessToken;
        return (await this.#refresh(login))?.tokens?.accessToken;
      });
    } catch (error) {
      // Unreachable authorization server: keep the current token; a 401 from the resource leads to recover().
      this.#log("warn", `Could not refresh the access token: ${messageOf(error)}`);
      return tokens.accessToken;
    }
  }

  /**
   * After a 401 (or 403 insufficient_scope): reload what another process saved, else refresh, else one browser
   * sign-in (coordinated across processes). Resolves with a fresh token; throws AuthRequiredError when that fails.
   */
  async recover(challenge: AuthChallenge): Promise<string> {
    const bearer = parseBearerChallenge(challenge.wwwAuthenticate);
    const stepUp = bearer.error === "insufficient_scope";
    if (challenge.status === 403 && !stepUp) {
      throw new AuthRequiredError(
        "The server refused access (403) for a reason that signing in again cannot fix.",
        "refused",
      );
    }
    if (this.#waiting) throw this.#waiting;
    const rejected = challenge.rejectedToken ?? this.#login?.tokens?.accessToken;
    const recovery = this.#guard(() =>
      this.#locked(async () => {
        const login = await this.#reload();
        const tokens = login?.tokens;
        if (
          tokens &&
          tokens.accessToken !== rejected &&
          !isExpired(tokens) &&
          (!stepUp || coversScope(tokens.scope ?? login.requestedScope, bearer.scope))
        ) {
          return tokens.accessToken;
        }
        // The server refused a token: its metadata may have moved to another authorization server (SEP-2352), so
        // this recovery asks it again instead of reusing what an earlier one learned.
        this.#discovered = undefined;
        if (!stepUp && login && tokens?.refreshToken) {
          const refreshed = await this.#refresh(login, bearer.resourceMetadataUrl);
          if (refreshed?.tokens) return refreshed.tokens.accessToken;
        }
        const granted = stepUp ? (tokens?.scope ?? login?.requestedScope) : undefined;
        const signedIn = await this.#signIn({
          challengeScope: bearer.scope,
          alreadyGranted: granted,
          resourceMetadataUrl: bearer.resourceMetadataUrl,
          strictSave: false,
        });
        return signedIn.tokens!.accessToken;
      }),
    );
    if (!this.#options.answerAtOnceWhenWaiting) return recovery;
    const waiting = new Promise<never>((_, reject) => {
      this.#raiseWaiting = reject;
    });
    recovery
      .finally(() => {
        this.#raiseWaiting = undefined;
        this.#waiting = undefined;
      })
      .catch(() => {});
    return Promise.race([recovery, waiting]);
  }

  /** Interactive sign-in now (for `login` commands), even when tokens exist. */
  async signIn(): Promise<SignInSummary> {
    return this.#guard(() =>
      this.#locked(async () => {
        const login = await this.#signIn({ strictSave: true });
        return {
          scope: login.tokens?.scope,
          expiresAt: login.tokens?.expiresAt,
          storedIn: this.#lastStoredIn ?? "file",
        };
      }),
    );
  }

  /**
   * Revokes the tokens (best effort) and deletes them and the client registration for this server. Resolves
   * false when no login was stored for it (nothing to remove: the URL or the header names may differ).
   */
  async signOut(): Promise<boolean> {
    return this.#locked(async () => {
      const stored = (await this.#store.describe()).kind !== "none";
      const login = await this.#reload();
      if (login?.tokens && login.client) await this.#revoke(login).catch(() => {});
      await this.#store.delete();
      this.#login = undefined;
      return stored;
    });
  }

  /** What is stored for this server, without a single secret: for `chat-mcp-bridge doctor`. */
  async describeLogin(): Promise<StoredLoginSummary | undefined> {
    const login = await this.#reload();
    if (!login) return undefined;
    const tokens = login.tokens;
    return {
      authorizationServerUrl: login.authorizationServerUrl,
      resource: login.resource,
      clientSource: login.client?.source,
      signedIn: tokens !== undefined,
      scope: tokens?.scope ?? login.requestedScope,
      expiresAt: tokens?.expiresAt,
      refreshable: tokens?.refreshToken !== undefined,
      account: tokens?.account,
    };
  }

  /** Where tokens live, for `whoami` / `auth status`. */
  describeStorage(): Promise<{ kind: "keychain" | "file" | "none"; location: string }> {
    return this.#store.describe();
  }

  async #reload(): Promise<StoredLogin | undefined> {
    const login = await this.#store.load();
    rememberLoginSecrets(login);
    this.#login = login?.serverUrl === this.serverUrl ? login : undefined;
    return this.#login;
  }

  async #persist(login: StoredLogin, strict: boolean): Promise<void> {
    this.#login = login;
    rememberLoginSecrets(login);
    try {
      this.#lastStoredIn = await this.#store.save(login);
    } catch (error) {
      if (strict || !(error instanceof TokenStoreError)) throw error;
      // The session goes on with the tokens in memory; the next process will have to sign in again.
      this.#log("warn", `${error.message} The login is kept in memory only.`);
    }
  }

  #locked<T>(task: () => Promise<T>): Promise<T> {
    return withFileLock(
      this.#lockPath,
      {
        // The holder may be waiting for the user in the browser.
        waitMs: this.#authTimeoutMs + 60_000,
        onWait: () => this.#log("info", "Another process is signing in to this server; waiting for it."),
      },
      task,
    );
  }

  /** Every failure of a sign-in path reaches callers as AuthRequiredError, keeping its message. */
  async #guard<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } catch (error) {
      if (error instanceof AuthRequiredError) throw error;
      const reason = error instanceof UnsafeUrlError ? "refused" : "failed";
      const code = networkErrorCode(error);
      const why = code
        ? `cannot reach ${new URL(this.serverUrl).origin} (${code}); is the server running there?`
        : messageOf(error);
      throw new AuthRequiredError(`Sign-in to ${this.serverUrl} failed: ${why}`, reason, {
        cause: error,
      });
    }
  }

  #discover(resourceMetadataUrl?: string): Promise<DiscoveredServer> {
    const key = resourceMetadataUrl ?? "";
    if (this.#discovered?.key !== key) {
      const value = loadFlows().then(({ discoverServer }) =>
        discoverServer(this.serverUrl, {
          resourceMetadataUrl,
          resource: this.#options.resource,
          fetchFn: this.#fetch,
          allowHttp: this.#options.allowHttp ?? false,
          log: (message) => this.#log("debug", message),
        }),
      );
      this.#discovered = { key, value };
      // A failed discovery is not cached: the next attempt asks again.
      value.catch(() => {
        if (this.#discovered?.value === value) this.#discovered = undefined;
      });
    }
    return this.#discovered.value;
  }

  /** Refreshes under the lock the caller holds; undefined (tokens dropped) when the server refuses the refresh token. */
  async #refresh(login: StoredLogin, resourceMetadataUrl?: string): Promise<StoredLogin | undefined> {
    const tokens = login.tokens!;
    const { refreshAuthorization, refusalCode } = await loadFlows();
    const server = await this.#discover(resourceMetadataUrl);
    if (server.authorizationServerUrl !== login.authorizationServerUrl || !login.client) {
      await this.#persist({ ...login, tokens: undefined, savedAt: Date.now() }, false);
      return undefined;
    }
    let fresh: OAuthTokens;
    const answer = accountRecordingFetch(this.#fetch);
    try {
      fresh = await refreshAuthorization(server.authorizationServerUrl, {
        metadata: server.metadata,
        clientInformation: login.client,
        refreshToken: tokens.refreshToken!,
        resource: login.resource ?? server.resource,
        fetchFn: answer.fetchFn,
      });
    } catch (error) {
      const refused = refusalCode(error);
      if (refused === undefined) throw error;
      this.#log("info", `The saved login was refused (${refused}); a new sign-in is needed.`);
      // invalid_client: the server forgot the registration (a restart without its data, an expiry), so it goes too.
      const forgotten = refused === "invalid_client" && login.client.source === "dynamic";
      await this.#persist(
        { ...login, tokens: undefined, ...(forgotten ? { client: undefined } : {}), savedAt: Date.now() },
        false,
      );
      return undefined;
    }
    const refreshed: StoredLogin = {
      ...login,
      tokens: {
        ...toStoredTokens(fresh),
        scope: fresh.scope ?? tokens.scope,
        account: answer.account() ?? tokens.account,
      },
      savedAt: Date.now(),
    };
    await this.#persist(refreshed, false);
    this.#log("debug", "Access token refreshed.");
    return refreshed;
  }

  /** The browser sign-in, under the lock the caller holds. */
  async #signIn(input: {
    challengeScope?: string;
    alreadyGranted?: string;
    resourceMetadataUrl?: string;
    strictSave: boolean;
  }): Promise<StoredLogin> {
    const {
      assertBrowsableUrl,
      chooseScope,
      exchangeAuthorization,
      OAuthError,
      startAuthorization,
      startLoopbackCallback,
      validateAuthorizationResponseIssuer,
    } = await loadFlows();
    const server = await this.#discover(input.resourceMetadataUrl);
    const current = await this.#reload();
    const sameServer = current?.authorizationServerUrl === server.authorizationServerUrl;
    const scope = chooseScope({
      challengeScope:
        input.challengeScope ?? (sameServer && !input.alreadyGranted ? current?.requestedScope : undefined),
      resourceMetadata: server.resourceMetadata,
      metadata: server.metadata,
      alreadyGranted: input.alreadyGranted,
    });
    const callback = await startLoopbackCallback(
      {
        port: this.#options.callbackPort ?? derivedCallbackPort(this.serverUrl),
        explicit: this.#options.callbackPort !== undefined,
      },
      this.#options.callbackHost,
    );
    try {
      let client = await this.#client(server, callback.redirectUri, scope, sameServer ? current : undefined);
      // The verifier is kept per state: only the answer for this state can spend it.
      const state = randomBytes(32).toString("base64url");
      const authorize = (client: StoredClient) =>
        startAuthorization(server.authorizationServerUrl, {
          metadata: server.metadata,
          clientInformation: client,
          redirectUrl: callback.redirectUri,
          scope,
          state,
          resource: server.resource,
        });
      let { authorizationUrl, codeVerifier } = await authorize(client);
      // A client not registered just now may be one the server no longer knows: its /authorize would show the
      // user an error page and leave this process waiting out the whole timeout.
      if (client === current?.client || client.source !== "dynamic") {
        if (await this.#refusesClient(authorizationUrl)) {
          if (client.source !== "dynamic") throw unknownClientError(client, server.authorizationServerUrl);
          this.#log("info", "The server no longer knows this client's registration; registering again.");
          client = await this.#client(server, callback.redirectUri, scope, undefined);
          ({ authorizationUrl, codeVerifier } = await authorize(client));
        }
      }
      let login: StoredLogin = {
        version: 1,
        serverUrl: this.serverUrl,
        ...(this.#options.profile && this.#options.profile !== "default"
          ? { profile: this.#options.profile }
          : {}),
        authorizationServerUrl: server.authorizationServerUrl,
        resource: server.resource,
        client,
        tokens: sameServer ? current?.tokens : undefined,
        requestedScope: scope,
        savedAt: Date.now(),
      };
      if (client !== current?.client) await this.#persist(login, input.strictSave);

      rememberSecret(codeVerifier);
      const verifiers = new Map([[state, codeVerifier]]);
      // The browser gets a one-time loopback start page, not this URL: `state` stays out of argv and stderr.
      assertBrowsableUrl(authorizationUrl.href);
      // RFC 9207, recorded with the verifier: the issuer this sign-in asked, and whether it promised to send `iss`.
      const acceptsIssuer = (iss: string | undefined): boolean => {
        try {
          validateAuthorizationResponseIssuer({
            iss,
            expectedIssuer: server.metadata?.issuer,
            issParameterSupported: server.metadata?.authorization_response_iss_parameter_supported === true,
          });
          return true;
        } catch {
          return false;
        }
      };
      let startUrl = "";
      const pending = callback.begin(authorizationUrl.href, state, this.#authTimeoutMs, {
        acceptsIssuer,
        onAnswerWithoutCookie: () => this.#userMustAct(startUrl, "cookie-refused"),
      });
      startUrl = pending.startUrl;
      const answer = pending.answer;
      answer.catch(() => {});
      await this.#present(startUrl);
      const { code, state: answeredState, iss } = await answer;

      let fresh: OAuthTokens;
      const tokenAnswer = accountRecordingFetch(this.#fetch);
      try {
        fresh = await exchangeAuthorization(server.authorizationServerUrl, {
          metadata: server.metadata,
          clientInformation: client,
          authorizationCode: code,
          ...(iss !== undefined ? { iss } : {}),
          codeVerifier: verifiers.get(answeredState)!,
          redirectUri: callback.redirectUri,
          resource: server.resource,
          fetchFn: tokenAnswer.fetchFn,
        });
      } catch (error) {
        const what = error instanceof OAuthError ? error.code : messageOf(error);
        const hint =
          what === "invalid_target"
            ? `it does not sign in to ${server.resource}: check the URL`
            : "sign in again";
        throw new AuthRequiredError(
          `The authorization server refused the sign-in code (${what}); ${hint}.`,
          "refused",
          { cause: error },
        );
      }
      login = {
        ...login,
        tokens: { ...toStoredTokens(fresh), scope: fresh.scope ?? scope, account: tokenAnswer.account() },
        savedAt: Date.now(),
      };
      await this.#persist(login, input.strictSave);
      this.#log("debug", `Signed in to ${this.serverUrl}.`);
      return login;
    } finally {
      await callback.close();
    }
  }

  /** The client to use: pre-registered, a metadata document URL, the stored registration, or a new one (RFC 7591). */
  async #client(
    server: DiscoveredServer,
    redirectUri: string,
    scope: string | undefined,
    current: StoredLogin | undefined,
  ): Promise<StoredClient> {
    const { clientId, clientSecret, clientMetadataUrl } = this.#options;
    if (clientId) {
      const stored = current?.client;
      if (
        stored?.source === "pre-registered" &&
        stored.client_id === clientId &&
        stored.client_secret === clientSecret
      ) {
        return stored;
      }
      return {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [],
        source: "pre-registered",
      };
    }
    if (clientMetadataUrl && server.metadata?.client_id_metadata_document_supported === true) {
      const stored = current?.client;
      if (stored?.source === "metadata-document" && stored.client_id === clientMetadataUrl) return stored;
      return { client_id: clientMetadataUrl, redirect_uris: [], source: "metadata-document" };
    }
    const stored = current?.client;
    if (
      stored?.source === "dynamic" &&
      stored.redirect_uris.includes(redirectUri) &&
      !(stored.client_secret_expires_at && stored.client_secret_expires_at * 1000 < Date.now())
    ) {
      return stored;
    }
    if (server.metadata && !server.metadata.registration_endpoint) {
      throw new AuthRequiredError(
        "The authorization server does not offer dynamic client registration; pass --client-id with a " +
          "pre-registered client (its secret in $CHAT_MCP_CLIENT_SECRET) or --client-metadata-url.",
        "refused",
      );
    }
    this.#log("debug", "Registering this client with the authorization server.");
    const { registerClient } = await loadFlows();
    const registered = await registerClient(server.authorizationServerUrl, {
      metadata: server.metadata,
      clientMetadata: {
        client_name: this.#options.clientName ?? "chat-mcp-bridge",
        // A program on the user's machine with a loopback redirect (RFC 8252), as MCP 2026-07-28 asks to say.
        application_type: "native",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      scope,
      fetchFn: this.#fetch,
    });
    return {
      client_id: registered.client_id,
      client_secret: registered.client_secret,
      client_secret_expires_at: registered.client_secret_expires_at,
      token_endpoint_auth_method: registered.token_endpoint_auth_method,
      redirect_uris: registered.redirect_uris.length > 0 ? registered.redirect_uris : [redirectUri],
      source: "dynamic",
    };
  }

  /**
   * Asks the authorization endpoint about this request as a browser would (redirects not followed): true only
   * when it answers that the client is unknown (`invalid_client`, as an error body or an error redirect).
   * Anything else, a failure to ask included, leaves the decision to the browser.
   */
  async #refusesClient(authorizationUrl: URL): Promise<boolean> {
    try {
      const response = await this.#fetch(authorizationUrl.href, {
        redirect: "manual",
        signal: AbortSignal.timeout(5_000),
      });
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const target =
          location && URL.canParse(location, authorizationUrl)
            ? new URL(location, authorizationUrl)
            : undefined;
        return target?.searchParams.get("error") === "invalid_client" && !target.searchParams.has("code");
      }
      if (response.status < 400 || response.status >= 500 || response.status === 429) {
        await response.body?.cancel();
        return false;
      }
      return /\binvalid_client\b/.test((await response.text()).slice(0, 16_384));
    } catch (error) {
      this.#log("debug", `Could not check the client with the authorization server: ${messageOf(error)}`);
      return false;
    }
  }

  /** Shows the sign-in URL and opens it where a browser can open; when none could, the user must act. */
  async #present(url: string): Promise<void> {
    const { presentSignInUrl } = await loadFlows();
    const shown = await presentSignInUrl(url, {
      openBrowser: this.#options.openBrowser !== false,
      env: this.#options.env,
      authTimeoutMs: this.#authTimeoutMs,
      log: this.#log,
    });
    if (shown === "not-opened") this.#userMustAct(url, "no-browser");
  }

  /** The sign-in cannot finish by itself: say so at once, and answer the waiting caller (the bridge) now. */
  #userMustAct(url: string, why: SignInWaitingError["why"]): void {
    const message = waitingMessage(url, why, {
      loginCommand: this.#options.loginCommand ?? "chat-mcp-bridge login <url>",
      authTimeoutMs: this.#authTimeoutMs,
    });
    if (why === "cookie-refused") process.stderr.write(`${message}\n`);
    if (!this.#options.answerAtOnceWhenWaiting) return;
    this.#waiting = new SignInWaitingError(message, url, why);
    this.#raiseWaiting?.(this.#waiting);
  }

  /** RFC 7009 revocation of both tokens, authenticated as the token endpoint would be. */
  async #revoke(login: StoredLogin): Promise<void> {
    const { RevocationMetadataSchema, selectClientAuthMethod } = await loadFlows();
    const server = await this.#discover();
    const revocation = RevocationMetadataSchema.safeParse(server.metadata ?? {});
    const endpoint = revocation.success ? revocation.data.revocation_endpoint : undefined;
    const client = login.client;
    if (!endpoint || !client || server.authorizationServerUrl !== login.authorizationServerUrl) return;
    const method = selectClientAuthMethod(
      client,
      revocation.data?.revocation_endpoint_auth_methods_supported ??
        server.metadata?.token_endpoint_auth_methods_supported ??
        [],
    );
    const tokens = login.tokens!;
    const pairs: [string, string][] = [
      ...(tokens.refreshToken ? [[tokens.refreshToken, "refresh_token"] as [string, string]] : []),
      [tokens.accessToken, "access_token"],
    ];
    for (const [token, hint] of pairs) {
      const body = new URLSearchParams({ token, token_type_hint: hint });
      const headers = new Headers({ "Content-Type": "application/x-www-form-urlencoded" });
      if (method === "client_secret_basic" && client.client_secret) {
        const credentials = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`;
        headers.set("Authorization", `Basic ${Buffer.from(credentials).toString("base64")}`);
      } else {
        body.set("client_id", client.client_id);
        if (method === "client_secret_post" && client.client_secret)
          body.set("client_secret", client.client_secret);
      }
      const response = await this.#fetch(endpoint, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.timeout(5_000),
      });
      await response.body?.cancel();
    }
  }
}

/** The preferred callback port for a server: stable, so a registration keeps matching; 20000-29999. */
export function derivedCallbackPort(serverUrl: string): number {
  return 20_000 + (createHash("sha256").update(serverUrl).digest().readUInt32BE(0) % 10_000);
}

/** A client id the user chose (`--client-id`, a metadata document URL) that the authorization server does not know. */
function unknownClientError(client: StoredClient, authorizationServerUrl: string): AuthRequiredError {
  const what =
    client.source === "metadata-document"
      ? `the client metadata document ${client.client_id}`
      : `the client id "${client.client_id}"`;
  const fix =
    client.source === "metadata-document"
      ? "check --client-metadata-url"
      : "check --client-id against the client registered there (and $CHAT_MCP_CLIENT_SECRET)";
  return new AuthRequiredError(
    `The authorization server ${authorizationServerUrl} does not know ${what} (invalid_client); ${fix}, ` +
      "or leave the option out to register automatically.",
    "refused",
  );
}

/** The error code (ECONNREFUSED, ENOTFOUND…) of a request that got no HTTP answer, as the one request-failure judge sees it. */
function networkErrorCode(error: unknown): string | undefined {
  // The failed request may be wrapped ("Could not load the authorization server metadata of ...": its cause).
  for (let failure = error, depth = 0; failure instanceof Error && depth < 5; depth++) {
    if (classifyRequestFailure(failure) !== "not-a-request-failure") {
      const code = (failure as { cause?: { code?: unknown } }).cause?.code;
      return typeof code === "string" ? code : "no answer";
    }
    failure = failure.cause;
  }
  return undefined;
}

// Error bodies of token and registration endpoints can echo what was sent to them (and carry terminal escapes):
// every message is redacted and made visible-safe.
function messageOf(error: unknown): string {
  return redactForTerminal(error instanceof Error ? error.message : String(error));
}

/** Tokens and client secrets of a login: removed from every message from now on. */
function rememberLoginSecrets(login: StoredLogin | undefined): void {
  rememberSecret(login?.tokens?.accessToken, login?.tokens?.refreshToken, login?.client?.client_secret);
}
