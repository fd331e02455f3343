/** The seeded accounts, teams and people of the reference server (the slugs are part of the public surface: tests and docs name them). */
import type { Account, User } from "./context.js";

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

export function seedAccounts(): Map<string, Account> {
  return new Map(SEED_ACCOUNTS.map((account) => [account.slug, { ...account }]));
}

export function seedUsers(): Map<string, User> {
  return new Map(SEED_USERS.map((user) => [user.id, { ...user, memberOf: [...user.memberOf] }]));
}
