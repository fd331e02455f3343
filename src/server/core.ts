/** The framework-free core shared by the HTTP server and the msw handlers: the seeded accounts and people, store, service, dev API keys, SSO. */
import { ReferenceChatService } from "./chat-service.js";
import type { Account, TokenVerifier, User } from "./context.js";
import { newId, newSecret, sameSecret } from "./ids.js";
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

export function createChatCore(options: ChatCoreOptions) {
  const store = options.store ?? new Store(options.dataFile ? { dataFile: options.dataFile } : {});
  const accounts = new Map(SEED_ACCOUNTS.map((account) => [account.slug, { ...account }]));
  /** Slug -> dev API key: one per seeded account or team, created once and kept in the store across restarts. */
  const apiKeys: Record<string, string> = {};
  store.batch(() => {
    for (const { slug } of accounts.values()) {
      let apiKey = store.apiKeys().find((candidate) => candidate.account === slug);
      if (!apiKey) {
        apiKey = {
          id: newId("key"),
          account: slug,
          key: newSecret(API_KEY_PREFIX),
          createdAt: new Date().toISOString(),
        };
        store.addApiKey(apiKey);
      }
      apiKeys[slug] = apiKey.key;
    }
  });
  /** API keys of the store as principals (subject `apikey:<id>`, all scopes). */
  const apiKeyVerifier: TokenVerifier = (token) => {
    if (!token.startsWith(API_KEY_PREFIX)) return null;
    const apiKey = store.apiKeys().find((candidate) => sameSecret(candidate.key, token));
    if (!apiKey) return null;
    return { account: apiKey.account, subject: `apikey:${apiKey.id}`, via: "api-key", scopes: ["chats"] };
  };
  return {
    store,
    accounts: accounts as ReadonlyMap<string, Account>,
    /** Seeded people by id. */
    users: new Map(
      SEED_USERS.map((user) => [user.id, { ...user, memberOf: [...user.memberOf] }]),
    ) as ReadonlyMap<string, User>,
    service: new ReferenceChatService({
      store,
      accounts,
      baseUrl: options.baseUrl,
      assistantDelayMs: options.assistantDelayMs,
    }),
    /** API keys first; OAuth pushes its verifier onto the same array. */
    tokenVerifiers: [apiKeyVerifier],
    sso: new SsoTickets(store, accounts, options.baseUrl),
    apiKeys,
  };
}

export const SEED_ACCOUNTS: readonly Account[] = [
  {
    slug: "personal",
    name: "Personal",
    kind: "personal",
    hostProjectId: "hostprj_personal_7f3a",
    requiresSso: false,
  },
  { slug: "acme", name: "Acme", kind: "team", hostProjectId: "hostprj_acme_91c2", requiresSso: false },
  /** No hosting project linked: its chats lack `hostProjectId`. */
  { slug: "studio", name: "Studio", kind: "team", requiresSso: false },
  {
    slug: "secure-corp",
    name: "Secure Corp",
    kind: "team",
    hostProjectId: "hostprj_securecorp_4d8e",
    requiresSso: true,
  },
];

/** People who sign in to the browser pages; ids equal their sign-in names. Dev-only passwords. */
export const SEED_USERS: readonly User[] = [
  { id: "dev", name: "Dev", password: "dev", memberOf: ["personal", "acme", "studio", "secure-corp"] },
  { id: "guest", name: "Guest", password: "guest", memberOf: ["studio"] },
];

const API_KEY_PREFIX = "chat_sk_";
