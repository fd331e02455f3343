/** What every flow of a session works with, handed over by OAuthSession: its options, the server metadata it learned, and its login as stored. */
import { rememberSecret } from "../../internal/redact.js";
import { splitScope } from "../checks.js";
import type { DiscoveredServer } from "../discovery.js";
import { isDpopBound } from "../dpop.js";
import { AuthRequiredError, type SignInWaitingError, TokenStoreError } from "../errors.js";
import type { AuthLog, LoginStore } from "../login-store.js";
import type { StoredClient, StoredLogin } from "../stored-login.js";
import type { OAuthSessionOptions, StoredLoginSummary } from "./options.js";

export interface SessionContext {
  /** The canonical protected resource URL. */
  readonly serverUrl: string;
  readonly options: OAuthSessionOptions;
  /** Discovery, registration, token and revocation requests (proxy-aware unless the options gave one). */
  readonly fetchFn: typeof fetch;
  /** Diagnostics; never receives tokens, codes, verifiers, secrets or header values. */
  readonly log: AuthLog;
  readonly authTimeoutMs: number;
  readonly storage: SessionStorage;
  readonly metadata: ServerMetadata;
}

/** What the session learned of its server (protected-resource and authorization server metadata): asked once, asked again after a refusal. */
export class ServerMetadata {
  #discovered?: { key: string; value: Promise<DiscoveredServer> };

  constructor(
    readonly serverUrl: string,
    private readonly options: {
      resource?: string | undefined;
      fetchFn: typeof fetch;
      allowHttp: boolean;
      log: AuthLog;
    },
  ) {}

  /**
   * The server's metadata, from `resourceMetadataUrl` when a challenge named one; shared by concurrent callers.
   * `deadline` (a sign-in's) ends the requests of a discovery this call starts.
   */
  get(resourceMetadataUrl?: string, deadline?: AbortSignal): Promise<DiscoveredServer> {
    const key = resourceMetadataUrl ?? "";
    if (this.#discovered?.key !== key) {
      // Discovery (zod schemas, SEP-2352 checks) loads only when a refresh, sign-in or sign-out needs it.
      const value = import("../discovery.js").then(({ discoverServer }) =>
        discoverServer(this.serverUrl, {
          resourceMetadataUrl,
          resource: this.options.resource,
          fetchFn: this.options.fetchFn,
          allowHttp: this.options.allowHttp,
          log: (message) => this.options.log("debug", message),
          signal: deadline,
        }),
      );
      this.#discovered = { key, value };
      // A failed discovery is not kept: the next attempt asks again.
      value.catch(() => {
        if (this.#discovered?.value === value) this.#discovered = undefined;
      });
    }
    return this.#discovered.value;
  }

  /** The server refused a token: its metadata may have moved to another authorization server (SEP-2352). */
  forget(): void {
    this.#discovered = undefined;
  }
}

/** The session's login as stored: read back for this server only, saved strictly or kept in memory, its secrets kept out of every message. */
export class SessionStorage {
  #login?: StoredLogin;
  #lastStoredIn?: "keychain" | "file";

  constructor(
    readonly store: LoginStore,
    readonly serverUrl: string,
    private readonly log: AuthLog,
  ) {}

  /** The login last read or saved by this process (for this server), without touching the store. */
  get current(): StoredLogin | undefined {
    return this.#login;
  }

  /** Where the last save went; "file" before any. */
  get lastStoredIn(): "keychain" | "file" {
    return this.#lastStoredIn ?? "file";
  }

  /** Reads the stored login again; a login saved for another server URL counts as none. */
  async reload(): Promise<StoredLogin | undefined> {
    const login = await this.store.load();
    rememberLoginSecrets(login);
    this.#login = login?.serverUrl === this.serverUrl ? login : undefined;
    return this.#login;
  }

  /**
   * Saves `login`. `strict` (the `login` commands) lets a store failure through; otherwise the session goes on
   * with the login in memory and says so (the next process will have to sign in again).
   */
  async persist(login: StoredLogin, strict: boolean): Promise<void> {
    this.#login = login;
    rememberLoginSecrets(login);
    try {
      this.#lastStoredIn = await this.store.save(login);
    } catch (error) {
      if (strict || !(error instanceof TokenStoreError)) throw error;
      this.log("warn", `${error.message} The login is kept in memory only.`);
    }
  }

  /** What is stored for this server, without a single secret. */
  async summary(): Promise<StoredLoginSummary | undefined> {
    const login = await this.reload();
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
      dpopBound: isDpopBound(login),
    };
  }

  /** Deletes the login (tokens and client registration) from every place it may be. */
  async delete(): Promise<void> {
    await this.store.delete();
    this.#login = undefined;
  }
}

function rememberLoginSecrets(login: StoredLogin | undefined): void {
  rememberSecret(login?.tokens?.accessToken, login?.tokens?.refreshToken, login?.client?.client_secret);
}

/** What a sign-in was asked for: the scope a challenge named, and the scope a step-up keeps. */
export interface SignInInput {
  challengeScope?: string | undefined;
  /** Step-up: the scope the current tokens already have, kept in the new request. */
  alreadyGranted?: string | undefined;
  resourceMetadataUrl?: string | undefined;
  /** True for `login` commands: a store failure fails the sign-in, and a moved authorization server is trusted. */
  strictSave: boolean;
}

export interface PersonSignInInput extends SignInInput {
  /** The command that signs in from a terminal, for the waiting messages. */
  loginCommand: string;
  /** The sign-in cannot finish by itself (no browser opened): what the user is told to do. */
  userMustAct: (waiting: SignInWaitingError) => void;
  /** A browser was opened on the sign-in page: the person finishes there. */
  browserOpened?: (url: string) => void;
}

/**
 * The login stored before a sign-in (reloaded), whether it is the same authorization server's, and the scope to ask
 * for. `unattended` (client credentials, an assertion): the secret goes only where the same client's went before
 * (SEP-2352): a server naming another authorization server could steer it to a collector, so only `login` may.
 */
export async function loginAndScope(
  context: SessionContext,
  server: DiscoveredServer,
  input: SignInInput,
  unattended?: { clientId: string; withheld: (loginCommand: string) => string },
): Promise<{ current: StoredLogin | undefined; sameServer: boolean; scope: string | undefined }> {
  const current = await context.storage.reload();
  const sameServer = current?.authorizationServerUrl === server.authorizationServerUrl;
  if (
    unattended &&
    current &&
    !sameServer &&
    !input.strictSave &&
    current.client?.client_id === unattended.clientId
  ) {
    throw new AuthRequiredError(
      `${context.serverUrl} now names the authorization server ${server.authorizationServerUrl} (it was ` +
        `${current.authorizationServerUrl}); ${unattended.withheld(context.options.loginCommand ?? "login")}`,
      "refused",
    );
  }
  const reused = (sameServer || unattended) && !input.alreadyGranted ? current?.requestedScope : undefined;
  return {
    current,
    sameServer,
    scope: chooseScope(input.challengeScope ?? reused, server, input.alreadyGranted),
  };
}

/**
 * The scope to ask for, as the MCP authorization spec says: the challenge's `scope`, else the resource's
 * `scopes_supported`, else none; plus any already granted (step-up asks for the union), plus `offline_access`
 * when the authorization server offers it and some scope is asked for.
 */
function chooseScope(
  challengeScope: string | undefined,
  server: Pick<DiscoveredServer, "resourceMetadata" | "metadata">,
  alreadyGranted: string | undefined,
): string | undefined {
  const base = challengeScope?.trim() || server.resourceMetadata?.scopes_supported?.join(" ") || "";
  const scopes = new Set([...splitScope(alreadyGranted), ...splitScope(base)]);
  if (scopes.size === 0) return undefined;
  if (server.metadata?.scopes_supported?.includes("offline_access")) scopes.add("offline_access");
  return [...scopes].join(" ");
}

/**
 * The login a sign-in saves before it has tokens (its client, so a later attempt reuses the registration), keeping
 * the tokens of the same authorization server until new ones replace them.
 */
export async function saveClientBeforeSignIn(
  context: SessionContext,
  input: {
    server: DiscoveredServer;
    client: StoredClient;
    scope: string | undefined;
    current: StoredLogin | undefined;
    sameServer: boolean;
    strictSave: boolean;
  },
): Promise<StoredLogin> {
  const { server, client, current } = input;
  const login = storedLoginOf(context, server, {
    client,
    tokens: input.sameServer ? current?.tokens : undefined,
    dpopKey: input.sameServer ? current?.dpopKey : undefined,
    requestedScope: input.scope,
  });
  if (client !== current?.client) await context.storage.persist(login, input.strictSave);
  return login;
}

/** A login of `context`'s server and profile, as discovered in `server`, with the client and tokens given, saved now. */
export function storedLoginOf(
  context: { serverUrl: string; options: { profile?: string | undefined } },
  server: Pick<DiscoveredServer, "authorizationServerUrl" | "resource">,
  fields: Pick<StoredLogin, "client" | "tokens" | "dpopKey" | "requestedScope">,
): StoredLogin {
  const { profile } = context.options;
  return {
    version: 1,
    serverUrl: context.serverUrl,
    ...(profile && profile !== "default" ? { profile } : {}),
    authorizationServerUrl: server.authorizationServerUrl,
    resource: server.resource,
    ...fields,
    savedAt: Date.now(),
  };
}

/** Saves the login a sign-in ended with (strictly for `login` commands) and says how it signed in, in the debug log. */
export async function saveSignedIn(
  context: SessionContext,
  login: StoredLogin,
  strict: boolean,
  how: string,
): Promise<StoredLogin> {
  await context.storage.persist(login, strict);
  context.log("debug", how);
  return login;
}
