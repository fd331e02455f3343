/** Browser pages: sign-in/out, each chat's page and preview (members only), and the SSO re-authentication page. */
import express, { type Express, type Request, type Response } from "express";
import {
  findIntegrationRequest,
  findPendingPermissions,
  type Message,
  pendingTaskOf,
} from "../wire/index.js";
import type { Account, User } from "./context.js";
import { type Html, html, sendPage } from "./html.js";
import { newSecret, sameSecret } from "./ids.js";
import { type CookieSessions, readCookie, SIGNIN_CSRF_COOKIE, safeNextPath } from "./sessions.js";
import type { SsoTickets } from "./sso.js";
import type { Store, StoredChat } from "./store.js";

export interface PagesContext {
  store: Store;
  accounts: ReadonlyMap<string, Account>;
  sessions: CookieSessions;
  sso: SsoTickets;
}

const form = express.urlencoded({ extended: false, limit: "16kb" });

export function mountPages(app: Express, ctx: PagesContext): void {
  const { sessions } = ctx;

  app.get("/signin", (req, res) => {
    renderSignIn(req, res, ctx, 200, safeNextPath(req.query.next));
  });

  app.post("/signin", form, (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const next = safeNextPath(body.next);
    const expected = readCookie(req, SIGNIN_CSRF_COOKIE);
    if (!expected || typeof body.csrf !== "string" || !sameSecret(expected, body.csrf)) {
      renderSignIn(req, res, ctx, 403, next, "The form expired. Please sign in again.");
      return;
    }
    const user = sessions.checkPassword(body.username, body.password);
    if (!user) {
      renderSignIn(req, res, ctx, 401, next, "Wrong username or password.");
      return;
    }
    res.clearCookie(SIGNIN_CSRF_COOKIE, sessions.cookieOptions());
    sessions.signIn(req, res, user);
    res.redirect(303, next);
  });

  app.get("/signout", (req, res) => {
    const user = sessions.userFor(req);
    if (!user) {
      res.redirect(303, "/signin");
      return;
    }
    sendPage(
      res,
      200,
      "Sign out",
      html`<h1>Sign out</h1><p>Signed in as <b>${user.name}</b>.</p>
        <form method="post" action="/signout"><input type="hidden" name="csrf" value="${sessions.csrfToken(req)}">
        <button type="submit">Sign out</button></form>`,
    );
  });

  app.post("/signout", form, (req, res) => {
    if (sessions.userFor(req) && !sessions.verifyCsrf(req, (req.body as Record<string, unknown>)?.csrf)) {
      sendPage(
        res,
        403,
        "Sign out",
        html`<h1>Sign out</h1><p class="error">The form expired; try again.</p>`,
      );
      return;
    }
    sessions.signOut(req, res);
    res.redirect(303, "/signin");
  });

  app.get("/", (req, res) => {
    const user = sessions.userFor(req);
    if (!user) {
      res.redirect(303, sessions.signInUrl("/"));
      return;
    }
    const sections = user.memberOf.map((slug) => {
      const chats = ctx.store.chatsOf(slug).slice(0, 20);
      return html`<h2>${ctx.accounts.get(slug)?.name ?? slug}</h2><ul>${chats.map(
        (chat) => html`<li><a href="${chatPath(chat)}">${chat.title}</a></li>`,
      )}</ul>${chats.length === 0 ? html`<p class="meta">No chats yet.</p>` : ""}`;
    });
    sendPage(
      res,
      200,
      "Chats",
      html`<p class="meta">Signed in as ${user.name} · <a href="/signout">Sign out</a></p>${sections}`,
    );
  });

  app.get("/:slug/chats/:chatId", (req, res) => {
    const access = chatForMember(req, res, ctx);
    if (access) renderChat(res, access.chat, ctx.store.messagesOf(access.chat.id), access.user, ctx);
  });

  app.get("/:slug/chats/:chatId/preview", (req, res) => {
    const access = chatForMember(req, res, ctx);
    if (access) renderPreview(res, access.chat, ctx.store.messagesOf(access.chat.id));
  });

  app.get("/sso/reauth", (req, res) => {
    const user = sessions.userFor(req);
    if (!user) {
      res.redirect(303, sessions.signInUrl(req.originalUrl));
      return;
    }
    const ticketId = typeof req.query.ticket === "string" ? req.query.ticket : "";
    const ticket = ctx.sso.ticket(ticketId);
    if (!ticket) {
      sendPage(
        res,
        404,
        "SSO",
        html`<h1>Link expired</h1><p>Retry the request to get a new re-authentication link.</p>`,
      );
      return;
    }
    const team = ctx.accounts.get(ticket.account)?.name ?? ticket.account;
    sendPage(
      res,
      200,
      "Complete SSO",
      html`<h1>Single sign-on for ${team}</h1>
        <p>${team} requires SSO. Signed in as <b>${user.name}</b>: complete SSO to let the waiting client continue.</p>
        <form method="post" action="/sso/reauth">
          <input type="hidden" name="ticket" value="${ticketId}">
          <input type="hidden" name="csrf" value="${sessions.csrfToken(req)}">
          <button type="submit">Complete SSO</button>
        </form>`,
    );
  });

  app.post("/sso/reauth", form, (req, res) => {
    const user = sessions.userFor(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!user) {
      res.redirect(303, sessions.signInUrl("/"));
      return;
    }
    if (!sessions.verifyCsrf(req, body.csrf)) {
      sendPage(res, 403, "SSO", html`<h1>Form expired</h1><p class="error">Open the link again.</p>`);
      return;
    }
    const outcome = ctx.sso.complete(typeof body.ticket === "string" ? body.ticket : "", user);
    if (outcome === "unknown-ticket") {
      sendPage(
        res,
        404,
        "SSO",
        html`<h1>Link expired</h1><p>Retry the request to get a new re-authentication link.</p>`,
      );
    } else if (outcome === "not-allowed") {
      sendPage(
        res,
        403,
        "SSO",
        html`<h1>Not allowed</h1><p>${user.name} cannot complete SSO for this credential.</p>`,
      );
    } else {
      sendPage(
        res,
        200,
        "SSO complete",
        html`<h1>SSO complete</h1><p>You can close this page and retry the request.</p>`,
      );
    }
  });
}

function renderSignIn(
  req: Request,
  res: Response,
  ctx: PagesContext,
  status: number,
  next: string,
  error?: string,
): void {
  const csrf = readCookie(req, SIGNIN_CSRF_COOKIE) ?? newSecret();
  res.cookie(SIGNIN_CSRF_COOKIE, csrf, ctx.sessions.cookieOptions(60 * 60 * 1000));
  const user = ctx.sessions.userFor(req);
  sendPage(
    res,
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
  );
}

/** The chat when a member of its account is signed in; otherwise answers sign-in (anonymous) or 404 (others). */
function chatForMember(
  req: Request,
  res: Response,
  ctx: PagesContext,
): { chat: StoredChat; user: User } | null {
  const user = ctx.sessions.userFor(req);
  if (!user) {
    res.redirect(303, ctx.sessions.signInUrl(req.originalUrl));
    return null;
  }
  const slug = String(req.params.slug);
  const chat = ctx.store.getChat(String(req.params.chatId));
  if (!chat || chat.account !== slug || !user.memberOf.includes(slug)) {
    sendPage(
      res,
      404,
      "Not found",
      html`<h1>Chat not found</h1><p>No chat here that ${user.name} can open.</p>`,
    );
    return null;
  }
  return { chat, user };
}

function renderChat(
  res: Response,
  chat: StoredChat,
  messages: readonly Message[],
  user: User,
  ctx: PagesContext,
): void {
  const account = ctx.accounts.get(chat.account);
  const latest = messages.findLast((message) => message.role === "assistant");
  sendPage(
    res,
    200,
    chat.title,
    html`<p class="meta">${account?.name ?? chat.account} · signed in as ${user.name} · <a href="/">all chats</a></p>
      <h1>${chat.title}</h1>
      <p class="meta">Chat ${chat.id} · ${chat.hostProjectId ? html`hosting project ${chat.hostProjectId}` : "no hosting project linked"}
        · <a href="${chatPath(chat)}/preview">preview</a></p>
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

function renderPreview(res: Response, chat: StoredChat, messages: readonly Message[]): void {
  const latest = messages.findLast((message) => message.role === "assistant");
  sendPage(
    res,
    200,
    `Preview: ${chat.title}`,
    html`<p class="meta"><a href="${chatPath(chat)}">back to the chat</a></p>
      <h1>Preview of ${chat.title}</h1>
      <p>${latest?.content ?? "Nothing to preview yet."}</p>`,
  );
}

function chatPath(chat: StoredChat): string {
  return `/${encodeURIComponent(chat.account)}/chats/${encodeURIComponent(chat.id)}`;
}
