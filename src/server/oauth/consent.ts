/** The consent page: a signed-in person picks the personal account or a team and approves or denies the client. */
import express, { type Express, type Request, type Response } from "express";
import type { Account, BrowserSessions, User } from "../context.js";
import { html, sendPage } from "../html.js";
import { type PendingAuthorization, type ReferenceOAuthProvider, redirectWith } from "./provider.js";

export const CONSENT_PATH = "/oauth/consent";

export interface ConsentContext {
  provider: ReferenceOAuthProvider;
  sessions: BrowserSessions;
  accounts: ReadonlyMap<string, Account>;
}

const form = express.urlencoded({ extended: false, limit: "16kb" });

export function mountConsentPage(app: Express, ctx: ConsentContext): void {
  app.get(CONSENT_PATH, (req, res) => {
    const requestId = typeof req.query.request === "string" ? req.query.request : "";
    const pending = ctx.provider.pendingAuthorization(requestId);
    if (!pending) {
      sendExpired(res);
      return;
    }
    const user = ctx.sessions.userFor(req);
    if (!user) {
      res.redirect(303, ctx.sessions.signInUrl(req.originalUrl));
      return;
    }
    renderConsent(req, res, ctx, pending, user);
  });

  app.post(CONSENT_PATH, form, (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const requestId = typeof body.request === "string" ? body.request : "";
    const user = ctx.sessions.userFor(req);
    if (!user) {
      res.redirect(303, ctx.sessions.signInUrl(`${CONSENT_PATH}?request=${encodeURIComponent(requestId)}`));
      return;
    }
    if (!ctx.sessions.verifyCsrf(req, body.csrf)) {
      sendPage(
        res,
        403,
        "Authorize",
        html`<h1>Form expired</h1><p class="error">Start the sign-in again from your client.</p>`,
      );
      return;
    }
    const pending = ctx.provider.pendingAuthorization(requestId);
    if (!pending) {
      sendExpired(res);
      return;
    }
    const state: Record<string, string> = pending.state !== undefined ? { state: pending.state } : {};
    if (body.decision !== "approve") {
      ctx.provider.takePendingAuthorization(requestId);
      const description = { error_description: "The user denied the authorization request" };
      res.redirect(
        303,
        redirectWith(pending.redirectUri, { error: "access_denied", ...description, ...state }),
      );
      return;
    }
    const account = typeof body.account === "string" ? body.account : "";
    if (!choicesFor(user, ctx.accounts).some((choice) => choice.slug === account)) {
      renderConsent(req, res, ctx, pending, user, "Choose one of your accounts or teams.");
      return;
    }
    ctx.provider.takePendingAuthorization(requestId);
    const approval = {
      clientId: pending.client.client_id,
      userId: user.id,
      account,
      scopes: pending.scopes,
      ...(pending.resource ? { resource: pending.resource } : {}),
    };
    res.redirect(
      303,
      ctx.provider.approvedRedirect(approval, pending.codeChallenge, pending.redirectUri, pending.state),
    );
  });
}

/** The personal account first, then the person's teams. */
function choicesFor(user: User, accounts: ReadonlyMap<string, Account>): Account[] {
  return user.memberOf
    .map((slug) => accounts.get(slug))
    .filter((account): account is Account => account !== undefined)
    .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "personal" ? -1 : 1));
}

function renderConsent(
  req: Request,
  res: Response,
  ctx: ConsentContext,
  pending: PendingAuthorization,
  user: User,
  error?: string,
): void {
  const clientName = pending.client.client_name ?? pending.client.client_id;
  const choices = choicesFor(user, ctx.accounts);
  const redirectHost = new URL(pending.redirectUri).host || pending.redirectUri;
  allowFormRedirectTo(res, pending.redirectUri);
  sendPage(
    res,
    error ? 400 : 200,
    "Authorize",
    html`<h1>Authorize ${clientName}</h1>
      <p><b>${clientName}</b> wants to read and write your chats. Signed in as <b>${user.name}</b>.</p>
      <p class="meta">After approval you return to ${redirectHost}. Scopes: ${pending.scopes.join(" ")}</p>
      ${error ? html`<p class="error">${error}</p>` : ""}
      <form method="post" action="${CONSENT_PATH}">
        <input type="hidden" name="request" value="${pending.id}">
        <input type="hidden" name="csrf" value="${ctx.sessions.csrfToken(req)}">
        <fieldset><legend>Use this account or team</legend>
          ${choices.map(
            (account, index) =>
              html`<label><input type="radio" name="account" value="${account.slug}"${index === 0 ? html` checked` : ""}>
                ${account.kind === "personal" ? "Personal account" : `Team ${account.name}`} (${account.slug})</label>`,
          )}
        </fieldset>
        <button type="submit" name="decision" value="approve">Approve</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </form>`,
  );
}

/**
 * Browsers apply CSP `form-action` to the redirect that follows a form post, and the shared page layout allows
 * only 'self': widen it, for this response only, to the client's redirect target.
 */
function allowFormRedirectTo(res: Response, redirectUri: string): void {
  const target = new URL(redirectUri);
  const source =
    target.protocol === "http:" || target.protocol === "https:" ? target.origin : target.protocol;
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name: string, value: number | string | readonly string[]) =>
    setHeader(
      name,
      name.toLowerCase() === "content-security-policy" && typeof value === "string"
        ? value.replace("form-action 'self'", `form-action 'self' ${source}`)
        : value,
    );
}

function sendExpired(res: Response): void {
  sendPage(
    res,
    400,
    "Authorize",
    html`<h1>Authorization request expired</h1><p>Start the sign-in again from your client.</p>`,
  );
}
