/** Builds the framework-free core shared by the HTTP server and the msw handlers: store, service, keys, SSO. */
import { apiKeyVerifier, ensureApiKeys } from "./api-keys.js";
import { ReferenceChatService } from "./chat-service.js";
import type { Account, TokenVerifier, User } from "./context.js";
import { seedAccounts, seedUsers } from "./seed.js";
import { SsoTickets } from "./sso.js";
import { Store } from "./store.js";

export interface ChatCoreOptions {
  dataFile?: string;
  /** An existing store to build on (ignores `dataFile`). */
  store?: Store;
  /** Read whenever a link is built. */
  baseUrl: () => string;
  /** How long the scripted assistant takes to answer (tests of long waits); default 0. */
  assistantDelayMs?: number;
}

export interface ChatCore {
  store: Store;
  accounts: ReadonlyMap<string, Account>;
  users: ReadonlyMap<string, User>;
  service: ReferenceChatService;
  /** API keys first; OAuth pushes its verifier onto the same array. */
  tokenVerifiers: TokenVerifier[];
  sso: SsoTickets;
  /** Slug -> dev API key, the same across restarts with a data file. */
  apiKeys: Record<string, string>;
}

export function createChatCore(options: ChatCoreOptions): ChatCore {
  const store = options.store ?? new Store(options.dataFile ? { dataFile: options.dataFile } : {});
  const accounts = seedAccounts();
  const users = seedUsers();
  const apiKeys = ensureApiKeys(store, accounts.values());
  return {
    store,
    accounts,
    users,
    service: new ReferenceChatService({
      store,
      accounts,
      baseUrl: options.baseUrl,
      assistantDelayMs: options.assistantDelayMs,
    }),
    tokenVerifiers: [apiKeyVerifier(store)],
    sso: new SsoTickets(store, accounts, options.baseUrl),
    apiKeys,
  };
}
