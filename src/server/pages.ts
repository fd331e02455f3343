/** Browser pages as a fetch route: sign-in/out, each chat's page and preview (members only), and the SSO re-authentication page. */
import {
  type Chat,
  findIntegrationRequest,
  findPendingPermissions,
  LIMIT_MAX,
  type Message,
  pendingTaskOf,
} from "../wire/index.js";
import type { Account, ChatService, Principal, User } from "./context.js";
import {
  clearCookie,
  type Html,
  html,
  pageResponse,
  type RequestInfo,
  type RouteHandler,
  readCookie,
  readFormBody,
  redirectResponse,
  serializeCookie,
} from "./http.js";
import { newSecret, sameSecret } from "./ids.js";
import { ServiceError } from "./service-error.js";
import { type CookieSessions, SIGNIN_CSRF_COOKIE, safeNextPath } from "./sessions.js";
import type { SsoTickets } from "./sso.js";

/** The pages read chats through the chat service, as `/v2` and `/mcp` do: its rules decide what a chat shows. */
export interface PagesContext {
  service: ChatService;
  accounts: ReadonlyMap<string, Account>;
  sessions: CookieSessions;
  sso: SsoTickets;
}

/** Forms of the pages are small. */
const MAX_PAGE_FORM_BYTES = 16 * 1024;

const CHAT_PAGE = /^\/([^/]+)\/chats\/([^/]+?)(\/preview)?\/?$/;

export function createPageRoutes(ctx: PagesContext): RouteHandler {
  const { sessions } = ctx;

  return async (request, info) => {
    const path = info.url.pathname;
    const method = request.method;
    if (path === "/signin" && method === "GET") {
      return renderSignIn(request, ctx, 200, safeNextPath(info.url.searchParams.get("next") ?? undefined));
    }
    if (path === "/signin" && method === "POST") {
      const body = await readFormBody(request, MAX_PAGE_FORM_BYTES);
      const next = safeNextPath(body.get("next") ?? undefined);
      const expected = readCookie(request, SIGNIN_CSRF_COOKIE);
      const csrf = body.get("csrf");
      if (!expected || csrf === null || !sameSecret(expected, csrf)) {
        return renderSignIn(request, ctx, 403, next, "The form expired. Please sign in again.");
      }
      const user = sessions.checkPassword(body.get("username"), body.get("password"));
      if (!user) return renderSignIn(request, ctx, 401, next, "Wrong username or password.");
      return redirectResponse(next, 303, [
        ["set-cookie", clearCookie(SIGNIN_CSRF_COOKIE, sessions.cookieOptions())],
        ["set-cookie", sessions.signIn(request, user)],
      ]);
    }
    if (path === "/signout" && method === "GET") {
      const user = sessions.userFor(request);
      if (!user) return redirectResponse("/signin", 303);
      return pageResponse(
        200,
        "Sign out",
        html`<h1>Sign out</h1><p>Signed in as <b>${user.name}</b>.</p>
        <form method="post" action="/signout"><input type="hidden" name="csrf" value="${sessions.csrfToken(request)}">
        <button type="submit">Sign out</button></form>`,
      );
    }
    if (path === "/signout" && method === "POST") {
      const body = await readFormBody(request, MAX_PAGE_FORM_BYTES);
      if (sessions.userFor(request) && !sessions.verifyCsrf(request, body.get("csrf") ?? undefined)) {
        return pageResponse(
          403,
          "Sign out",
          html`<h1>Sign out</h1><p class="error">The form expired; try again.</p>`,
        );
      }
      return redirectResponse("/signin", 303, [["set-cookie", sessions.signOut(request)]]);
    }
    if (path === "/" && method === "GET") {
      const user = sessions.userFor(request);
      if (!user) return redirectResponse(sessions.signInUrl("/"), 303);
      const sections = [];
      for (const slug of user.memberOf) {
        const { data: chats } = await ctx.service.listChats(pagePrincipal(user, slug), { limit: 20 });
        sections.push(
          html`<h2>${ctx.accounts.get(slug)?.name ?? slug}</h2><ul>${chats.map(
            (chat) => html`<li><a href="${chatPath(slug, chat)}">${chat.title}</a></li>`,
          )}</ul>${chats.length === 0 ? html`<p class="meta">No chats yet.</p>` : ""}`,
        );
      }
      return pageResponse(
        200,
        "Chats",
        html`<p class="meta">Signed in as ${user.name} · <a href="/signout">Sign out</a></p>${sections}`,
      );
    }
    if (path === "/sso/reauth" && method === "GET") return ssoPage(request, info, ctx);
    if (path === "/sso/reauth" && method === "POST") return ssoComplete(request, ctx);
    const chatPage = method === "GET" ? CHAT_PAGE.exec(path) : null;
    if (chatPage && !path.startsWith("/v2/") && !path.startsWith("/mcp/")) {
      const slug = decodeSegment(chatPage[1]!);
      const chatId = decodeSegment(chatPage[2]!);
      if (slug === undefined || chatId === undefined) return undefined;
      const access = await chatForMember(request, info, ctx, slug, chatId);
      if (access instanceof Response) return access;
      return chatPage[3]
        ? renderPreview(slug, access.chat, access.messages)
        : renderChat(slug, access.chat, access.messages, access.user, ctx);
    }
    return undefined;
  };
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function linkExpired(): Response {
  const page = html`<h1>Link expired</h1><p>Retry the request to get a new re-authentication link.</p>`;
  return pageResponse(404, "SSO", page);
}

function ssoPage(request: Request, info: RequestInfo, ctx: PagesContext): Response {
  const { sessions } = ctx;
  const user = sessions.userFor(request);
  if (!user) return redirectResponse(sessions.signInUrl(`${info.url.pathname}${info.url.search}`), 303);
  const ticketId = info.url.searchParams.get("ticket") ?? "";
  const ticket = ctx.sso.ticket(ticketId);
  if (!ticket) return linkExpired();
  const team = ctx.accounts.get(ticket.account)?.name ?? ticket.account;
  return pageResponse(
    200,
    "Complete SSO",
    html`<h1>Single sign-on for ${team}</h1>
        <p>${team} requires SSO. Signed in as <b>${user.name}</b>: complete SSO to let the waiting client continue.</p>
        <form method="post" action="/sso/reauth">
          <input type="hidden" name="ticket" value="${ticketId}">
          <input type="hidden" name="csrf" value="${sessions.csrfToken(request)}">
          <button type="submit">Complete SSO</button>
        </form>`,
  );
}

async function ssoComplete(request: Request, ctx: PagesContext): Promise<Response> {
  const { sessions } = ctx;
  const user = sessions.userFor(request);
  const body = await readFormBody(request, MAX_PAGE_FORM_BYTES);
  if (!user) return redirectResponse(sessions.signInUrl("/"), 303);
  if (!sessions.verifyCsrf(request, body.get("csrf") ?? undefined)) {
    return pageResponse(403, "SSO", html`<h1>Form expired</h1><p class="error">Open the link again.</p>`);
  }
  const outcome = ctx.sso.complete(body.get("ticket") ?? "", user);
  if (outcome === "unknown-ticket") return linkExpired();
  if (outcome === "not-allowed") {
    return pageResponse(
      403,
      "SSO",
      html`<h1>Not allowed</h1><p>${user.name} cannot complete SSO for this credential.</p>`,
    );
  }
  return pageResponse(
    200,
    "SSO complete",
    html`<h1>SSO complete</h1><p>You can close this page and retry the request.</p>`,
  );
}

function renderSignIn(
  req: Request,
  ctx: PagesContext,
  status: number,
  next: string,
  error?: string,
): Response {
  const csrf = readCookie(req, SIGNIN_CSRF_COOKIE) ?? newSecret();
  const cookie = serializeCookie(SIGNIN_CSRF_COOKIE, csrf, ctx.sessions.cookieOptions(60 * 60 * 1000));
  const user = ctx.sessions.userFor(req);
  return pageResponse(
    status,
    "Sign in",
    html`<h1>Sign in to the chat reference server</h1>
      ${user ? html`<p class="meta">Currently signed in as ${user.name}.</p>` : ""}
      ${error ? html`<p class="error">${error}</p>` : ""}
      <form method="post" action="/signin">
        <input type="hidden" name="csrf" value="${csrf}">
        <input type="hidden" name="next" value="${next}">
        <label>Username <input name="username" autocomplete="username" required></label>
        <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
        <button type="submit">Sign in</button>
      </form>
      <p class="meta">Dev accounts: dev/dev (all teams), guest/guest (studio only).</p>`,
    [["set-cookie", cookie]],
  );
}

/** The principal a signed-in person acts as on the pages of an account or team they belong to. */
function pagePrincipal(user: User, slug: string): Principal {
  return { account: slug, subject: `page:${user.id}`, via: "session", userId: user.id, scopes: ["chats"] };
}

/**
 * The chat and its messages when a member of its account is signed in; otherwise answers sign-in (anonymous) or
 * 404 (others). Whether the chat is the account's is the chat service's rule, as for `/v2` and `/mcp`.
 */
async function chatForMember(
  req: Request,
  info: RequestInfo,
  ctx: PagesContext,
  slug: string,
  chatId: string,
): Promise<{ chat: Chat; messages: Message[]; user: User } | Response> {
  const user = ctx.sessions.userFor(req);
  if (!user) return redirectResponse(ctx.sessions.signInUrl(`${info.url.pathname}${info.url.search}`), 303);
  const notFound = () =>
    pageResponse(
      404,
      "Not found",
      html`<h1>Chat not found</h1><p>No chat here that ${user.name} can open.</p>`,
    );
  if (!user.memberOf.includes(slug)) return notFound();
  const principal = pagePrincipal(user, slug);
  try {
    const chat = await ctx.service.getChat(principal, chatId);
    // The service's pages come newest first; the transcript reads oldest first.
    const messages: Message[] = [];
    let cursor: string | undefined;
    do {
      const page = await ctx.service.listMessages(principal, chatId, {
        limit: LIMIT_MAX,
        ...(cursor ? { cursor } : {}),
      });
      messages.unshift(...page.data.toReversed());
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return { chat, messages, user };
  } catch (error) {
    if (error instanceof ServiceError && error.code === "not_found") return notFound();
    throw error;
  }
}

function renderChat(
  slug: string,
  chat: Chat,
  messages: readonly Message[],
  user: User,
  ctx: PagesContext,
): Response {
  const account = ctx.accounts.get(slug);
  const latest = messages.findLast((message) => message.role === "assistant");
  return pageResponse(
    200,
    chat.title ?? "",
    html`<p class="meta">${account?.name ?? slug} · signed in as ${user.name} · <a href="/">all chats</a></p>
      <h1>${chat.title}</h1>
      <p class="meta">Chat ${chat.id} · ${chat.hostProjectId ? html`hosting project ${chat.hostProjectId}` : "no hosting project linked"}
        · <a href="${chatPath(slug, chat)}/preview">preview</a></p>
      ${waitsFor(latest)}
      ${messages.map(
        (message) =>
          html`<div class="msg ${message.role}"><div class="meta">${message.role} · ${message.createdAt}${
            message.finishReason ? html` · ${message.finishReason}` : ""
          }</div><div>${message.content}</div>${partDetails(message)}</div>`,
      )}`,
  );
}

function waitsFor(latest: Message | undefined): Html {
  const pending = pendingTaskOf(latest);
  if (!pending) return html`<p class="meta">Not waiting for anything.</p>`;
  if (pending.kind === "integration") {
    return html`<div class="waits">Waiting for the integrations <b>${pending.integrations.join(", ")}</b> to be connected
      (resolve with <code>confirmed-steps</code>).</div>`;
  }
  const scripts = pending.permissions.map(
    (permission) => permission.input.executeScript ?? permission.toolName,
  );
  return html`<div class="waits">Waiting for permission to run <b>${scripts.join(", ")}</b>
    (resolve with <code>confirmed-permissions</code>, or send a message to skip it).</div>`;
}

function partDetails(message: Message): Html | string {
  const request = findIntegrationRequest(message);
  const permissions = findPendingPermissions(message);
  return html`${request ? html`<p class="meta">Requests integrations: ${request.integrations.join(", ")}</p>` : ""}${
    permissions ? html`<pre>${JSON.stringify(permissions, null, 2)}</pre>` : ""
  }`;
}

function renderPreview(slug: string, chat: Chat, messages: readonly Message[]): Response {
  const latest = messages.findLast((message) => message.role === "assistant");
  return pageResponse(
    200,
    `Preview: ${chat.title ?? ""}`,
    html`<p class="meta"><a href="${chatPath(slug, chat)}">back to the chat</a></p>
      <h1>Preview of ${chat.title}</h1>
      <p>${latest?.content ?? "Nothing to preview yet."}</p>`,
  );
}

function chatPath(slug: string, chat: Chat): string {
  return `/${encodeURIComponent(slug)}/chats/${encodeURIComponent(chat.id)}`;
}
