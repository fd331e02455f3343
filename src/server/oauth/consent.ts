/** The consent page: in the browser that started the request, a signed-in person picks an account or team and approves or denies. */
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import type { Account, BrowserSessions, User } from "../context.js";
import { html, sendPage } from "../html.js";
import { safeNextPath } from "../sessions.js";
import type { ConsentBrowserBinding } from "./browser-binding.js";
import { type PendingAuthorization, type ReferenceOAuthProvider, redirectWith } from "./provider.js";

export const CONSENT_PATH = "/oauth/consent";

export interface ConsentContext {
  provider: ReferenceOAuthProvider;
  sessions: BrowserSessions;
  accounts: ReadonlyMap<string, Account>;
  binding: ConsentBrowserBinding;
}

const form = express.urlencoded({ extended: false, limit: "16kb" });

export function mountConsentPage(app: Express, ctx: ConsentContext): void {
  /** The sign-in hop on the way to a consent page is refused in another browser too, before any password is typed. */
  const refuseSignInForOtherBrowser = (req: Request, res: Response, next: NextFunction) => {
    const source = (req.method === "POST" ? req.body : req.query) as Record<string, unknown> | undefined;
    const pending = consentRequestIn(source?.next, ctx.provider);
    if (pending && !boundToThisBrowser(req, ctx, pending)) sendOtherBrowser(res);
    else next();
  };
  app.get("/signin", refuseSignInForOtherBrowser);
  app.post("/signin", form, refuseSignInForOtherBrowser);

  app.get(CONSENT_PATH, (req, res) => {
    const requestId = typeof req.query.request === "string" ? req.query.request : "";
    const pending = ctx.provider.pendingAuthorization(requestId);
    if (!pending) {
      sendExpired(res);
      return;
    }
    if (!boundToThisBrowser(req, ctx, pending)) {
      sendOtherBrowser(res);
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
    const started = ctx.provider.pendingAuthorization(requestId);
    if (started && !boundToThisBrowser(req, ctx, started)) {
      sendOtherBrowser(res);
      return;
    }
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
      ctx.binding.release(res, requestId);
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
    ctx.binding.release(res, requestId);
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

function boundToThisBrowser(req: Request, ctx: ConsentContext, pending: PendingAuthorization): boolean {
  return ctx.binding.presentedBy(req, pending.id, pending.browserNonce);
}

/** The live pending request a sign-in's `next` leads to, when it leads to the consent page. */
function consentRequestIn(next: unknown, provider: ReferenceOAuthProvider): PendingAuthorization | undefined {
  const target = new URL(safeNextPath(next), "http://next.invalid");
  // As express routes it: case-insensitive, a trailing slash allowed, percent-encoding decoded.
  let path = target.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // Not valid percent-encoding: express would not route it to the consent page either.
  }
  if (path.replace(/\/+$/, "").toLowerCase() !== CONSENT_PATH) return undefined;
  return provider.pendingAuthorization(target.searchParams.get("request") ?? "");
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

/** Someone else's consent link (consent phishing), or cookies lost on the way: nothing can be granted here. */
function sendOtherBrowser(res: Response): void {
  sendPage(
    res,
    403,
    "Authorize",
    html`<h1>This sign-in link was started in another browser</h1>
      <p class="error">For your safety, a sign-in can only be completed in the browser that started it. Nothing was granted.</p>
      <p>Start again from your app. If someone sent you this link, do not use it.</p>`,
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
