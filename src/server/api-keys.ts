/** Dev API keys: one per seeded account or team, created once and kept in the store across restarts. */
import type { Account, Principal, TokenVerifier } from "./context.js";
import { newId, newSecret, sameSecret } from "./ids.js";
import type { Store } from "./store.js";

export const API_KEY_PREFIX = "chat_sk_";

/** Creates a key for every account that has none yet; returns slug -> key. */
export function ensureApiKeys(store: Store, accounts: Iterable<Account>): Record<string, string> {
  const keys: Record<string, string> = {};
  store.batch(() => {
    for (const account of accounts) {
      let apiKey = store.apiKeys().find((candidate) => candidate.account === account.slug);
      if (!apiKey) {
        apiKey = {
          id: newId("key"),
          account: account.slug,
          key: newSecret(API_KEY_PREFIX),
          createdAt: new Date().toISOString(),
        };
        store.addApiKey(apiKey);
      }
      keys[account.slug] = apiKey.key;
    }
  });
  return keys;
}

/** Resolves API keys of the store to principals (subject `apikey:<id>`, all scopes). */
export function apiKeyVerifier(store: Store): TokenVerifier {
  return (token: string): Principal | null => {
    if (!token.startsWith(API_KEY_PREFIX)) return null;
    const apiKey = store.apiKeys().find((candidate) => sameSecret(candidate.key, token));
    if (!apiKey) return null;
    return { account: apiKey.account, subject: `apikey:${apiKey.id}`, via: "api-key", scopes: ["chats"] };
  };
}
