/** The session's login as stored: read back for this server only, saved strictly or kept in memory, its secrets kept out of every message. */
import { rememberSecret } from "../../internal/redact.js";
import type { DiscoveredServer } from "../discovery.js";
import { isDpopBound } from "../dpop.js";
import { TokenStoreError } from "../errors.js";
import type { AuthLog, LoginStore } from "../login-store.js";
import type { StoredClient, StoredLogin } from "../stored-login.js";
import type { StoredLoginSummary } from "./options.js";

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
   * with the login in memory and says so.
   */
  async persist(login: StoredLogin, strict: boolean): Promise<void> {
    this.#login = login;
    rememberLoginSecrets(login);
    try {
      this.#lastStoredIn = await this.store.save(login);
    } catch (error) {
      if (strict || !(error instanceof TokenStoreError)) throw error;
      // The next process will have to sign in again.
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

/** Tokens and client secrets of a login: removed from every message from now on. */
function rememberLoginSecrets(login: StoredLogin | undefined): void {
  rememberSecret(login?.tokens?.accessToken, login?.tokens?.refreshToken, login?.client?.client_secret);
}

/**
 * The login a sign-in saves before it has tokens (its client, so a later attempt reuses the registration), keeping
 * the tokens of the same authorization server until new ones replace them.
 */
export async function saveClientBeforeSignIn(
  context: {
    serverUrl: string;
    options: { profile?: string | undefined };
    storage: SessionStorage;
  },
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
