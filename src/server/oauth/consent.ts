/** The consent page: in the browser that started the request, a signed-in person picks an account or team and approves or denies. */
import type { Account, BrowserSessions, User } from "../context.js";
import { html } from "../html.js";
import { pageResponse, readFormBody, redirectResponse } from "../http.js";
import { safeNextPath } from "../sessions.js";
import { formatUserCode } from "./device-authorizations.js";
import type { OAuthParts } from "./parts.js";
import { isDeviceConsent, type PendingConsent } from "./provider.js";

export const CONSENT_PATH = "/oauth/consent";

/** `GET`/`POST` of the consent page, and the sign-in hop on the way to it; undefined for every other request. */
export async function handleConsent(
  parts: OAuthParts,
  request: Request,
  url: URL,
): Promise<Response | undefined> {
  const path = url.pathname;
  if (path === "/signin" && (request.method === "GET" || request.method === "POST")) {
    return refuseSignInForOtherBrowser(parts, request, url);
  }
  if (path !== CONSENT_PATH) return undefined;
  if (request.method === "GET") return showConsent(parts, request, url);
  if (request.method === "POST") return decideConsent(parts, request);
  return undefined;
}

/** The sign-in hop on the way to a consent page is refused in another browser too, before any password is typed. */
async function refuseSignInForOtherBrowser(
  parts: OAuthParts,
  request: Request,
  url: URL,
): Promise<Response | undefined> {
  let next = url.searchParams.get("next");
  if (request.method === "POST") {
    // Read from a copy: the sign-in page itself reads the form afterwards.
    next = (await readFormBody(request.clone()).catch(() => new URLSearchParams())).get("next") ?? next;
  }
  const pending = consentRequestIn(next, parts);
  return pending && !boundToThisBrowser(parts, request, pending) ? otherBrowserPage() : undefined;
}

async function showConsent(parts: OAuthParts, request: Request, url: URL): Promise<Response> {
  const pending = livePending(parts, url.searchParams.get("request") ?? "");
  if (!pending) return expiredPage();
  if (!boundToThisBrowser(parts, request, pending)) return otherBrowserPage();
  const sessions = parts.ctx.sessions;
  const user = sessions.userFor(request);
  if (!user) return redirectResponse(sessions.signInUrl(`${url.pathname}${url.search}`), 303);
  return consentPage(parts, request, pending, user);
}

async function decideConsent(parts: OAuthParts, request: Request): Promise<Response> {
  const sessions = parts.ctx.sessions;
  let form: URLSearchParams;
  try {
    form = await readFormBody(request);
  } catch {
    return expiredPage();
  }
  const requestId = form.get("request") ?? "";
  const started = parts.flows.pendingConsent(requestId);
  if (started && !boundToThisBrowser(parts, request, started)) return otherBrowserPage();
  const user = sessions.userFor(request);
  if (!user)
    return redirectResponse(
      sessions.signInUrl(`${CONSENT_PATH}?request=${encodeURIComponent(requestId)}`),
      303,
    );
  if (!sessions.verifyCsrf(request, form.get("csrf") ?? undefined)) {
    return pageResponse(
      403,
      "Authorize",
      html`<h1>Form expired</h1><p class="error">Start the sign-in again from your client.</p>`,
    );
  }
  const pending = livePending(parts, requestId);
  if (!pending) return expiredPage();
  const release: Array<[string, string]> = [["set-cookie", parts.binding.release(requestId)]];
  if (form.get("decision") !== "approve") {
    parts.flows.takePendingConsent(requestId);
    if (isDeviceConsent(pending)) {
      parts.devices.deny(pending.userCode);
      return deviceDecidedPage("denied", release);
    }
    const denied = parts.flows.authorizationResponse(
      pending.redirectUri,
      { error: "access_denied", error_description: "The user denied the authorization request" },
      pending.state,
    );
    return redirectResponse(denied, 303, release);
  }
  const account = form.get("account") ?? "";
  if (!choicesFor(user, parts.ctx.accounts).some((choice) => choice.slug === account)) {
    return consentPage(parts, request, pending, user, "Choose one of your accounts or teams.");
  }
  parts.flows.takePendingConsent(requestId);
  const approval = {
    clientId: pending.client.client_id,
    userId: user.id,
    account,
    scopes: pending.scopes,
    ...(pending.resource ? { resource: pending.resource } : {}),
  };
  if (isDeviceConsent(pending)) {
    const approved = parts.devices.approve(pending.userCode, approval);
    return approved ? deviceDecidedPage("approved", release) : expiredPage();
  }
  return redirectResponse(parts.flows.approvedRedirect(approval, pending), 303, release);
}

/** The pending request with this id, unless it is a device's that was decided or expired meanwhile. */
function livePending(parts: OAuthParts, id: string): PendingConsent | undefined {
  const pending = parts.flows.pendingConsent(id);
  if (pending && isDeviceConsent(pending) && !parts.devices.pending(pending.userCode)) return undefined;
  return pending;
}

/** The end of a device's consent: nothing to redirect to, the device learns the decision when it next polls. */
function deviceDecidedPage(outcome: "approved" | "denied", headers: Array<[string, string]>): Response {
  return pageResponse(
    200,
    "Authorize",
    outcome === "approved"
      ? html`<h1>Device approved</h1><p>Go back to your device: it finishes signing in by itself within a few seconds. You can close this page.</p>`
      : html`<h1>Sign-in denied</h1><p>Nothing was granted; your device is told so when it next asks. You can close this page.</p>`,
    headers,
  );
}

function boundToThisBrowser(parts: OAuthParts, request: Request, pending: PendingConsent): boolean {
  return parts.binding.presentedBy(request, pending.id, pending.browserNonce);
}

/** The live pending request a sign-in's `next` leads to, when it leads to the consent page. */
function consentRequestIn(next: unknown, parts: OAuthParts): PendingConsent | undefined {
  const target = new URL(safeNextPath(next), "http://next.invalid");
  // As a router would match it: case-insensitive, a trailing slash allowed, percent-encoding decoded.
  let path = target.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // Not valid percent-encoding: it does not lead to the consent page either.
  }
  if (path.replace(/\/+$/, "").toLowerCase() !== CONSENT_PATH) return undefined;
  return parts.flows.pendingConsent(target.searchParams.get("request") ?? "");
}

/** The personal account first, then the person's teams. */
function choicesFor(user: User, accounts: ReadonlyMap<string, Account>): Account[] {
  return user.memberOf
    .map((slug) => accounts.get(slug))
    .filter((account): account is Account => account !== undefined)
    .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "personal" ? -1 : 1));
}

function consentPage(
  parts: OAuthParts,
  request: Request,
  pending: PendingConsent,
  user: User,
  error?: string,
): Response {
  const sessions: BrowserSessions = parts.ctx.sessions;
  const clientName = pending.client.client_name ?? pending.client.client_id;
  const choices = choicesFor(user, parts.ctx.accounts);
  const afterApproval = isDeviceConsent(pending)
    ? `After approval, go back to the device that shows the code ${formatUserCode(pending.userCode)}.`
    : `After approval you return to ${new URL(pending.redirectUri).host || pending.redirectUri}.`;
  const page = pageResponse(
    error ? 400 : 200,
    "Authorize",
    html`<h1>Authorize ${clientName}</h1>
      <p><b>${clientName}</b> wants to read and write your chats. Signed in as <b>${user.name}</b>.</p>
      <p class="meta">${afterApproval} Scopes: ${pending.scopes.join(" ")}</p>
      ${error ? html`<p class="error">${error}</p>` : ""}
      <form method="post" action="${CONSENT_PATH}">
        <input type="hidden" name="request" value="${pending.id}">
        <input type="hidden" name="csrf" value="${sessions.csrfToken(request)}">
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
  return isDeviceConsent(pending) ? page : withFormRedirectTo(page, pending.redirectUri);
}

/**
 * Browsers apply CSP `form-action` to the redirect that follows a form post, and the shared page layout allows
 * only 'self': widen it, for this response only, to the client's redirect target.
 */
function withFormRedirectTo(response: Response, redirectUri: string): Response {
  const target = new URL(redirectUri);
  const source =
    target.protocol === "http:" || target.protocol === "https:" ? target.origin : target.protocol;
  const policy = response.headers.get("content-security-policy");
  if (policy)
    response.headers.set(
      "content-security-policy",
      policy.replace("form-action 'self'", `form-action 'self' ${source}`),
    );
  return response;
}

/** Someone else's consent link (consent phishing), or cookies lost on the way: nothing can be granted here. */
function otherBrowserPage(): Response {
  return pageResponse(
    403,
    "Authorize",
    html`<h1>This sign-in link was started in another browser</h1>
      <p class="error">For your safety, a sign-in can only be completed in the browser that started it. Nothing was granted.</p>
      <p>Start again from your app. If someone sent you this link, do not use it.</p>`,
  );
}

function expiredPage(): Response {
  return pageResponse(
    400,
    "Authorize",
    html`<h1>Authorization request expired</h1><p>Start the sign-in again from your client.</p>`,
  );
}
