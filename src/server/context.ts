/** Types that join the reference server's parts: accounts, principals, the chat service and the shared context. */
import type { ReferenceServerOptions } from "./options.js";
import type { TokenBucketLimiter } from "./rate-limit.js";
import type { Store } from "./store.js";

export type { RateLimitOptions, ReferenceServerOptions } from "./options.js";

import type {
  Chat,
  CreateChatBody,
  ListChatsParams,
  ListMessagesParams,
  ListPage,
  Message,
  OtherTask,
  Preview,
  Task,
} from "../wire/index.js";

/** A personal account or a team; `slug` appears in chat URLs. */
export interface Account {
  slug: string;
  name: string;
  kind: "personal" | "team";
  /** Hosting-platform project linked to the account; absent means its chats lack `hostProjectId`. */
  hostProjectId?: string;
  requiresSso: boolean;
}

/** A person who can sign in to the reference server's pages (consent, chat page, preview, SSO). */
export interface User {
  id: string;
  name: string;
  password: string;
  /** Slugs of the accounts and teams this person belongs to. */
  memberOf: string[];
}

/** Who a request acts for: resolved from an API key or an OAuth access token. */
export interface Principal {
  /** Slug of the account or team the credential is scoped to. */
  account: string;
  /** Stable id of the credential's grant (API key id or OAuth grant family); SSO state is kept per subject. */
  subject: string;
  /** `session`: a signed-in person on the server's own pages. */
  via: "api-key" | "oauth" | "session";
  userId?: string;
  clientId?: string;
  scopes: string[];
  /** Seconds since epoch at which the credential expires, when it does. */
  expiresAt?: number;
  /** RFC 8707 resource the token was issued for, when it was bound to one. */
  resource?: string;
  /** RFC 9449 `cnf.jkt` of a DPoP-bound token: only a proof signed by that key may present it. */
  jkt?: string;
}

/** A credential as the resource saw it: the scheme it came with (RFC 6750 Bearer or RFC 9449 DPoP) and its proof. */
export interface PresentedCredential {
  scheme: "bearer" | "dpop";
  token: string;
  principal: Principal;
  /** The `DPoP` header's value, when there was one. */
  proof: string | null;
  method: string;
  /** The URL the client addressed (the server's public base URL and the request's path). */
  url: string;
  resourceMetadataUrl: string;
}

/** Why a presented credential is refused (401 unless `status` says 429): the challenge and any headers (`DPoP-Nonce`). */
export interface CredentialRefusal {
  status?: 401 | 429;
  /** `invalid_token`, `invalid_dpop_proof` or `use_dpop_nonce`. */
  error: string;
  description: string;
  wwwAuthenticate: string;
  headers: Record<string, string>;
}

/**
 * The proof-of-possession rule of `/mcp` and `/v2` (RFC 9449), set by the OAuth part: a refusal, or `spend`, which the
 * route calls once its own checks passed (a DPoP proof is then remembered, so that it is good for one request; a
 * proof used meanwhile, or one the server cannot remember now, is refused).
 */
export type CredentialCheck = (
  presented: PresentedCredential,
) => Promise<{ refusal: CredentialRefusal } | { spend: () => CredentialRefusal | undefined }>;

/** Resolves a bearer token to a principal, or null when this verifier does not know it. */
export type TokenVerifier = (token: string) => Principal | null | Promise<Principal | null>;

export { ServiceError } from "./service-error.js";

/** What the assistant is doing while a create, send or resolve waits for it: elapsed of total ms, and a phrase. */
export interface AssistantProgress {
  progress: number;
  total: number;
  message: string;
}

/** Told of the assistant's steps, for callers that can show them (MCP progress notifications). */
export type OnAssistantProgress = (step: AssistantProgress) => void;

/**
 * How a caller follows a call that waits for the assistant: who hears its steps, and the signal that calls it off
 * (an MCP cancellation): aborted while the assistant thinks, the call writes nothing and rejects.
 */
export interface AssistantWatch {
  onProgress?: OnAssistantProgress | undefined;
  signal?: AbortSignal | undefined;
}

/** The chat rules, once, behind both `/v2` and `/mcp`. Every method throws `ServiceError` on failure. */
export interface ChatService {
  createChat(principal: Principal, body: CreateChatBody, watch?: AssistantWatch): Promise<Chat>;
  listChats(principal: Principal, params: ListChatsParams): Promise<ListPage<Chat>>;
  getChat(principal: Principal, chatId: string): Promise<Chat>;
  listMessages(principal: Principal, chatId: string, params: ListMessagesParams): Promise<ListPage<Message>>;
  getMessage(principal: Principal, chatId: string, messageId: string): Promise<Message>;
  sendMessage(
    principal: Principal,
    chatId: string,
    body: { message: string },
    watch?: AssistantWatch,
  ): Promise<Message>;
  resolveTask(
    principal: Principal,
    chatId: string,
    task: Task | OtherTask,
    watch?: AssistantWatch,
  ): Promise<Message>;
  getPreview(principal: Principal, chatId: string): Promise<Preview>;
}

/** SSO for teams that require it: a principal must complete the re-authentication link first. */
export interface SsoGate {
  /** Throws `ServiceError("sso_required", ..., { reauthUrl })` when the principal has not completed SSO. */
  assertVerified(principal: Principal): void;
}

/** Where a session cookie is read from: a fetch `Request`, or anything with a node-style `cookie` header. */
export type CookieSource = { headers: Headers } | { headers: { cookie?: string | undefined } };

/** Browser sessions of people signed in to the reference server's pages (HttpOnly, SameSite cookie). */
export interface BrowserSessions {
  userFor(req: CookieSource): User | null;
  /** `/signin?next=<path>`: where to send a person who must sign in first (`next` must be a same-origin path). */
  signInUrl(next: string): string;
  /** The CSRF token to embed as hidden field `csrf` in forms of the signed-in person's pages; null when signed out. */
  csrfToken(req: CookieSource): string | null;
  /** True when `token` is the CSRF token of the request's session (constant-time compare). */
  verifyCsrf(req: CookieSource, token: unknown): boolean;
}

/** Everything the server's parts share; built once by `startReferenceServer()` and passed to every `mount*`. */
export interface ServerContext {
  /** Base URL without trailing slash, e.g. `http://127.0.0.1:53211`; known before any `mount*` runs. */
  baseUrl: string;
  options: ReferenceServerOptions;
  store: Store;
  service: ChatService;
  /** Seeded accounts and teams by slug. */
  accounts: ReadonlyMap<string, Account>;
  /** Seeded people by id (ids equal their sign-in names). */
  users: ReadonlyMap<string, User>;
  /** Tried in order for every bearer token on `/v2` (and by `/mcp`); API keys first, OAuth pushes its own. */
  tokenVerifiers: TokenVerifier[];
  /** DPoP-bound tokens checked against their proofs (set by the OAuth part; absent: nothing is bound). */
  credentialCheck?: CredentialCheck;
  sso: SsoGate;
  sessions: BrowserSessions;
  /** Per-credential token bucket of `/v2` and `/mcp`, taken before a DPoP proof is verified; absent: no limit. */
  rateLimiter?: TokenBucketLimiter;
  /** Run by `close()` before the sockets are closed (stop timers, close MCP transports). */
  closeHooks: Array<() => void | Promise<void>>;
}
