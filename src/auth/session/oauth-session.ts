/** OAuthSession: one login to one protected resource, kept fresh across processes (sign-in, refresh, step-up, sign-out). */
import type { DpopSession } from "@modelcontextprotocol/client";
import { configDir as defaultConfigDir } from "../../config/index.js";
import { checkConfigDir } from "../../internal/files.js";
import { proxyAwareFetch } from "../../internal/proxy.js";
import { rememberSecret } from "../../internal/redact.js";
import {
  assertSecureUrl,
  coversScope,
  isHttpsUrlWithPath,
  isLoopbackHost,
  parseBearerChallenge,
} from "../checks.js";
import { dpopSessionOf, isDpopBound } from "../dpop.js";
import {
  AuthRequiredError,
  messageOf,
  networkErrorCode,
  SignInWaitingError,
  UnsafeUrlError,
} from "../errors.js";
import { canonicalServerUrl, loginKey, loginPaths } from "../login-key.js";
import { withLoginLock } from "../login-lock.js";
import { LoginStore } from "../login-store.js";
import { checkShownUrl } from "../shown-url.js";
import type { StoredLogin } from "../stored-login.js";
import { isDue, isExpired } from "../token-lifetime.js";
import { ServerMetadata, type SessionContext, SessionStorage } from "./context.js";
import {
  type AuthChallenge,
  DEFAULT_AUTH_TIMEOUT_MS,
  type OAuthSessionOptions,
  type SignInRequest,
  type SignInSummary,
  type StoredLoginSummary,
} from "./options.js";
import { assertProviderOptions } from "./provider-options.js";

// A saved, fresh token is the common path (every bridge start): it loads neither the SDK's OAuth client nor
// discovery's zod schemas nor the callback server. Each flow loads on its first use.
const loadRefresh = () => import("./refresh.js");
const loadSignIn = () => import("./browser-sign-in.js");
const loadRevocation = () => import("./revocation.js");
const loadUnattendedSignIn = () => import("./unattended-sign-in.js");

/** A wait for another process's lock longer than this is a sign-in, not a refresh: then it is said. */
const LASTING_LOCK_WAIT_MS = 3_000;

/** Extra time the lock waits beyond the sign-in timeout: its holder may be waiting for the user in the browser. */
const LOCK_MARGIN_MS = 60_000;

export class OAuthSession {
  readonly serverUrl: string;
  readonly #options: OAuthSessionOptions;
  readonly #context: SessionContext;
  readonly #storage: SessionStorage;
  readonly #lockPath: string;
  /** The sign-in in progress is waiting for the user (see `answerAtOnceWhenWaiting`). */
  #waiting?: SignInWaitingError;
  /** Rejects the `recover()` call that started the sign-in in progress, when that waits for the user. */
  #raiseWaiting?: (error: SignInWaitingError) => void;
  /** The recovery (refresh or sign-in) in progress, for `signInSettled()`. */
  #recovery?: Promise<string>;
  /** The read of the stored login `readAhead()` started, until the first `accessToken()` takes it. */
  #readingAhead?: Promise<unknown>;

  constructor(options: OAuthSessionOptions) {
    this.#options = options;
    const log = options.log ?? (() => {});
    rememberSecret(options.clientSecret);
    const url = assertSecureUrl(options.serverUrl, "server URL", options.allowHttp);
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname))
      log(
        "warn",
        `warning: ${url.origin} is reached over plain http (--allow-http): tokens travel unencrypted.`,
      );
    if (options.clientMetadataUrl && !isHttpsUrlWithPath(options.clientMetadataUrl)) {
      throw new UnsafeUrlError("The client metadata URL must be an https URL with a path.");
    }
    assertProviderOptions(options);
    this.serverUrl = canonicalServerUrl(options.serverUrl);
    const key = loginKey(this.serverUrl, options.headerNames, {
      profile: options.profile,
      resource: options.resource,
    });
    const dir = options.configDir ?? defaultConfigDir();
    // Before any sign-in starts: a login that could not be saved, or a lock another user planted, would only show later.
    checkConfigDir(dir);
    const paths = loginPaths(dir, key);
    this.#lockPath = paths.lock;
    this.#storage = new SessionStorage(
      new LoginStore(options.tokenStore ?? "auto", key, paths, log),
      this.serverUrl,
      log,
    );
    // Discovery, registration, token and revocation calls honour the proxy variables like every other request.
    const fetchFn = options.fetch ?? proxyAwareFetch({ env: options.env });
    this.#context = {
      serverUrl: this.serverUrl,
      options,
      fetchFn,
      log,
      authTimeoutMs: options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS,
      storage: this.#storage,
      metadata: new ServerMetadata(this.serverUrl, {
        resource: options.resource,
        fetchFn,
        allowHttp: options.allowHttp ?? false,
        log,
      }),
    };
  }

  /**
   * Starts reading the stored login now, so that the first `accessToken()` finds it read: a keychain's native
   * module and its read take tens of milliseconds, which the bridge overlaps with the rest of its start. A failed
   * read is left for `accessToken()` to meet again and report.
   */
  readAhead(): void {
    this.#readingAhead ??= this.#storage.reload().catch(() => undefined);
  }

  /** A usable access token, refreshed ahead of expiry under the lock; undefined when never signed in. Never opens a browser. */
  async accessToken(): Promise<string | undefined> {
    if (this.#readingAhead) {
      await this.#readingAhead;
      this.#readingAhead = undefined;
    }
    // The store is read again only when the token in memory is missing or due, or another process saved a new
    // login (seen from file metadata alone), so most calls read no file and never the keychain.
    let tokens = this.#storage.current?.tokens;
    if (!tokens || isDue(tokens) || (await this.#storage.store.changedSinceSeen()))
      tokens = (await this.#storage.reload())?.tokens;
    if (!tokens) return undefined;
    if (!isDue(tokens)) return tokens.accessToken;
    // With client credentials, a token that is due is replaced by a new grant: no person is needed for it.
    const renews = this.#signsInWithoutPerson();
    if (!tokens.refreshToken && !renews) return isExpired(tokens) ? undefined : tokens.accessToken;
    try {
      return await this.#locked(async () => {
        const login = await this.#storage.reload();
        // Another process may have refreshed while this one waited for the lock.
        if (!login?.tokens || !isDue(login.tokens)) return login?.tokens?.accessToken;
        if (login.tokens.refreshToken) return (await this.#refresh(login))?.tokens?.accessToken;
        if (renews) return (await this.#signIn({ strictSave: false })).tokens?.accessToken;
        return login.tokens.accessToken;
      });
    } catch (error) {
      // Unreachable authorization server: keep the current token; a 401 from the resource leads to recover().
      this.#context.log("warn", `Could not refresh the access token: ${messageOf(error)}`);
      return tokens.accessToken;
    }
  }

  /** The DPoP signer of the login's key when its tokens are DPoP-bound (RFC 9449); undefined for Bearer tokens. */
  async proofSigner(): Promise<DpopSession | undefined> {
    const login = this.#storage.current;
    return login?.dpopKey && isDpopBound(login) ? dpopSessionOf(login.dpopKey) : undefined;
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
    const rejected = challenge.rejectedToken ?? this.#storage.current?.tokens?.accessToken;
    const recovery = this.#guard(async () => {
      const recovered = await this.#locked(async (): Promise<string | SignInRequest> => {
        const login = await this.#storage.reload();
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
        this.#context.metadata.forget();
        if (!stepUp && login && tokens?.refreshToken) {
          const refreshed = await this.#refresh(login, bearer.resourceMetadataUrl);
          if (refreshed?.tokens) return refreshed.tokens.accessToken;
        }
        const granted = stepUp ? (tokens?.scope ?? login?.requestedScope) : undefined;
        const request = {
          challengeScope: bearer.scope,
          alreadyGranted: granted,
          resourceMetadataUrl: bearer.resourceMetadataUrl,
        };
        // A person's sign-in runs in its own process, which takes the lock: this one lets go of it first.
        if (this.#options.signInElsewhere && !this.#signsInWithoutPerson())
          return { ...request, rejectedToken: rejected };
        const signedIn = await this.#signIn({ ...request, strictSave: false });
        return signedIn.tokens!.accessToken;
      });
      return typeof recovered === "string" ? recovered : this.#signInElsewhere(recovered);
    });
    this.#recovery = recovery;
    recovery.then(
      () => this.#settleRecovery(recovery),
      () => this.#settleRecovery(recovery),
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

  /**
   * The recovery in progress (a sign-in that may be waiting for the person), settled with its outcome; undefined
   * when none runs. The bridge waits on it after `recover()` answered it at once with SignInWaitingError.
   */
  signInSettled(): Promise<string> | undefined {
    return this.#recovery;
  }

  #settleRecovery(recovery: Promise<string>): void {
    if (this.#recovery === recovery) this.#recovery = undefined;
  }

  /** Runs the sign-in in the process `signInElsewhere` starts, then reads the login it stored. */
  async #signInElsewhere(request: SignInRequest): Promise<string> {
    await this.#options.signInElsewhere!(request, (prompt) => {
      if (prompt.browserOpened) this.#options.onSignInPrompt?.(prompt);
      else this.#userMustAct(new SignInWaitingError(prompt.message, prompt.url, "no-browser"));
    });
    const tokens = (await this.#storage.reload())?.tokens;
    if (!tokens || isExpired(tokens))
      throw new AuthRequiredError(
        "The sign-in ended, but no login was stored for this server; sign in again.",
        "failed",
      );
    return tokens.accessToken;
  }

  /**
   * The sign-in another process asked for (`signInElsewhere`), under the lock: none when a usable login other than
   * the refused token was stored meanwhile; the login is stored strictly (the asking process reads it back).
   */
  async signInFor(request: SignInRequest): Promise<void> {
    await this.#guard(() =>
      this.#locked(async () => {
        const tokens = (await this.#storage.reload())?.tokens;
        if (tokens && tokens.accessToken !== request.rejectedToken && !isExpired(tokens)) return;
        const { rejectedToken: _refused, ...input } = request;
        await this.#signIn({ ...input, strictSave: true });
      }),
    );
  }

  /** Interactive sign-in now (for `login` commands), even when tokens exist. */
  async signIn(): Promise<SignInSummary> {
    return this.#guard(() =>
      this.#locked(async () => {
        const login = await this.#signIn({ strictSave: true });
        return {
          scope: login.tokens?.scope,
          expiresAt: login.tokens?.expiresAt,
          storedIn: this.#storage.lastStoredIn,
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
      const stored = (await this.#storage.store.describe()).kind !== "none";
      const login = await this.#storage.reload();
      if (login?.tokens && login.client) {
        const { revokeLogin } = await loadRevocation();
        await revokeLogin(this.#context, login).catch(() => {});
      }
      await this.#storage.delete();
      return stored;
    });
  }

  /** What is stored for this server, without a single secret: for `chat-mcp-bridge doctor`. */
  describeLogin(): Promise<StoredLoginSummary | undefined> {
    return this.#storage.summary();
  }

  /** Where tokens live, for `whoami` / `auth status`. */
  describeStorage(): Promise<{ kind: "keychain" | "file" | "none"; location: string }> {
    return this.#storage.store.describe();
  }

  async #refresh(login: StoredLogin, resourceMetadataUrl?: string): Promise<StoredLogin | undefined> {
    const { refreshLogin } = await loadRefresh();
    return refreshLogin(this.#context, login, resourceMetadataUrl);
  }

  async #signIn(input: {
    challengeScope?: string | undefined;
    alreadyGranted?: string | undefined;
    resourceMetadataUrl?: string | undefined;
    strictSave: boolean;
  }): Promise<StoredLogin> {
    if (this.#signsInWithoutPerson()) {
      const { signInUnattended } = await loadUnattendedSignIn();
      return signInUnattended(this.#context, input);
    }
    const { signIn } = await loadSignIn();
    return signIn(this.#context, {
      ...input,
      loginCommand: this.#options.loginCommand ?? "chat-mcp-bridge login <url>",
      userMustAct: (waiting) => this.#userMustAct(waiting),
      browserOpened: (url) => {
        const shown = checkShownUrl(url, "sign-in URL");
        this.#options.onSignInPrompt?.({
          url: shown.href,
          message: `A browser window opened to sign in to ${this.serverUrl} (the link opens ${shown.site}); finish signing in there.`,
          browserOpened: true,
        });
      },
    });
  }

  /** A grant with no person (client credentials, a workload token, an ID-JAG): a token that is due is asked for anew. */
  #signsInWithoutPerson(): boolean {
    const { clientCredentials, workloadIdentity, enterpriseIdentity } = this.#options;
    return (clientCredentials ?? workloadIdentity ?? enterpriseIdentity) !== undefined;
  }

  #locked<T>(task: () => Promise<T>): Promise<T> {
    // The holder is most often refreshing (a moment, said with --debug); a wait that lasts is a sign-in.
    let lasting: NodeJS.Timeout | undefined;
    return withLoginLock(
      this.#lockPath,
      {
        waitMs: this.#context.authTimeoutMs + LOCK_MARGIN_MS,
        onWait: () => {
          this.#context.log("debug", "Another process holds the login lock; waiting for it.");
          lasting = setTimeout(
            () => this.#context.log("info", "Another process is signing in to this server; waiting for it."),
            LASTING_LOCK_WAIT_MS,
          );
          lasting.unref();
        },
      },
      () => {
        clearTimeout(lasting);
        return task();
      },
    ).finally(() => clearTimeout(lasting));
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

  /** The sign-in cannot finish by itself: answer the waiting caller (the bridge) now, when it asked for that. */
  #userMustAct(waiting: SignInWaitingError): void {
    // The message names the checked URL (waitingMessage); the URL itself is checked again here, the one way out.
    this.#options.onSignInPrompt?.({
      url: checkShownUrl(waiting.signInUrl, "sign-in URL").href,
      message: waiting.message,
      browserOpened: false,
    });
    if (!this.#options.answerAtOnceWhenWaiting) return;
    this.#waiting = waiting;
    this.#raiseWaiting?.(waiting);
  }
}
