/** Types that join the reference server's parts: accounts, principals, the chat service and the shared context. */
import type { Request } from "express";
import type {
  Chat,
  CreateChatBody,
  ErrorCode,
  ListChatsParams,
  ListMessagesParams,
  ListPage,
  Message,
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
  via: "api-key" | "oauth";
  userId?: string;
  clientId?: string;
  scopes: string[];
  /** Seconds since epoch at which the credential expires, when it does. */
  expiresAt?: number;
  /** RFC 8707 resource the token was issued for, when it was bound to one. */
  resource?: string;
}

/** Resolves a bearer token to a principal, or null when this verifier does not know it. */
export type TokenVerifier = (token: string) => Principal | null | Promise<Principal | null>;

/** A failure of the service, mapped to the error body of CONTRACT §2 by REST and to `isError` by MCP. */
export class ServiceError extends Error {
  override readonly name = "ServiceError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The chat rules, once, behind both `/v2` and `/mcp`. Every method throws `ServiceError` on failure. */
export interface ChatService {
  createChat(principal: Principal, body: CreateChatBody): Promise<Chat>;
  listChats(principal: Principal, params: ListChatsParams): Promise<ListPage<Chat>>;
  getChat(principal: Principal, chatId: string): Promise<Chat>;
  listMessages(principal: Principal, chatId: string, params: ListMessagesParams): Promise<ListPage<Message>>;
  getMessage(principal: Principal, chatId: string, messageId: string): Promise<Message>;
  sendMessage(principal: Principal, chatId: string, body: { message: string }): Promise<Message>;
  resolveTask(principal: Principal, chatId: string, task: Task): Promise<Message>;
  getPreview(principal: Principal, chatId: string): Promise<Preview>;
}

/** SSO for teams that require it: a principal must complete the re-authentication link first. */
export interface SsoGate {
  /** Throws `ServiceError("sso_required", ..., { reauthUrl })` when the principal has not completed SSO. */
  assertVerified(principal: Principal): void;
}

/** Browser sessions of people signed in to the reference server's pages (HttpOnly, SameSite cookie). */
export interface BrowserSessions {
  userFor(req: Request): User | null;
}
