/** The person's side of the authorization server: `/authorize`, the `/device` code page and the consent page both lead to, in the browser that started each request. */
import { randomUUID } from "node:crypto";
import type { Account, BrowserSessions, User } from "../context.js";
import {
  clearCookie,
  html,
  pageResponse,
  readCookie,
  readFormBody,
  redirectResponse,
  serializeCookie,
} from "../http.js";
import { newSecret, sameSecret } from "../ids.js";
import { ServiceError } from "../service-error.js";
import { safeNextPath } from "../sessions.js";
import { formatUserCode, normalizeUserCode } from "./device.js";
import {
  type AuthorizationRequest,
  type DeviceConsentRequest,
  isDeviceConsent,
  OAuthError,
  PENDING_CONSENT_TTL_MS,
  type PendingConsent,
  redirectUriProblem,
  redirectUriRegistered,
} from "./grants.js";
import { findClient, type OAuthParts, rateLimited } from "./token.js";

export const CONSENT_PATH = "/oauth/consent";
export const DEVICE_VERIFICATION_PATH = "/device";

/**
 * A pending request is bound to the browser that started it by a random nonce in an HttpOnly cookie, one per request
 * (`chat_ref_authz_<request id>`, so sign-ins started in parallel do not evict each other), living as long as the
 * request. Path `/`: the sign-in hop (`/signin?next=<consent page>`) checks it too.
 */
function bindingCookie(parts: OAuthParts, requestId: string) {
  const options = {
    httpOnly: true,
    sameSite: "lax" as const,
    secure: parts.issuer.startsWith("https:"),
    path: "/",
  };
  return { name: `chat_ref_authz_${requestId}`, options };
}

/** Keeps the request for the consent page, bound to this browser, and sends the browser there. */
function toConsent(
  parts: OAuthParts,
  request: AuthorizationRequest | DeviceConsentRequest,
  status: 302 | 303,
  notAfter?: number,
): Response {
  const id = randomUUID();
  const nonce = newSecret();
  parts.grants.addPending(request, nonce, id, notAfter);
  const cookie = bindingCookie(parts, id);
  const setCookie = serializeCookie(cookie.name, nonce, {
    ...cookie.options,
    maxAgeMs: PENDING_CONSENT_TTL_MS,
  });
  return redirectResponse(`${CONSENT_PATH}?request=${encodeURIComponent(id)}`, status, [
    ["set-cookie", setCookie],
  ]);
}

function boundToThisBrowser(parts: OAuthParts, request: Request, pending: PendingConsent): boolean {
  const presented = readCookie(request, bindingCookie(parts, pending.id).name);
  return presented !== undefined && sameSecret(pending.browserNonce, presented);
}

/** The `Set-Cookie` value that clears the binding once the request is decided. */
function releaseBrowser(parts: OAuthParts, requestId: string): string {
  const cookie = bindingCookie(parts, requestId);
  return clearCookie(cookie.name, cookie.options);
}

export async function handleAuthorize(
  parts: OAuthParts,
  request: Request,
  clientIp: string,
): Promise<Response> {
  const limited = rateLimited(parts.limiters.authorize, clientIp, "page");
  if (limited) return limited;
  let params: URLSearchParams;
  if (request.method === "GET") params = new URL(request.url).searchParams;
  else if (request.method === "POST") {
    try {
      params = await readFormBody(request);
    } catch (error) {
      return errorPage("invalid_request", error instanceof ServiceError ? error.message : "unreadable form");
    }
  } else return errorPage("invalid_request", "use GET or POST", 405);

  // Until the client and its redirect URI are known good, errors are shown here, never redirected.
  const clientId = params.get("client_id");
  if (!clientId) return errorPage("invalid_request", "client_id is required");
  const lookup = await findClient(parts, clientId);
  if (!lookup.ok) return errorPage("invalid_client", lookup.reason);
  const { client, vouched } = lookup;
  const requestedRedirect = params.get("redirect_uri");
  if (requestedRedirect === null && client.redirect_uris.length !== 1) {
    return errorPage("invalid_request", "redirect_uri is required: the client registered several");
  }
  const redirectUri = requestedRedirect ?? (client.redirect_uris[0] as string);
  const problem = redirectUriProblem(redirectUri);
  if (problem) return errorPage("invalid_request", `redirect_uri ${problem}`);
  if (!redirectUriRegistered(client.redirect_uris, redirectUri)) {
    return errorPage("invalid_request", "redirect_uri is not registered for this client");
  }

  const state = params.get("state") ?? undefined;
  // RFC 9700 §4.11.2: an error goes back to the client only when the server can vouch for its redirect URI.
  const refuse = (error: string, description: string) =>
    vouched
      ? redirectResponse(
          parts.grants.authorizationResponse(redirectUri, { error, error_description: description }, state),
        )
      : errorPage(error, description);

  if (params.get("response_type") !== "code") {
    return refuse("unsupported_response_type", "response_type must be code");
  }
  const codeChallenge = params.get("code_challenge");
  if (!codeChallenge || !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) {
    return refuse("invalid_request", "code_challenge is required (PKCE, the S256 method)");
  }
  if (params.get("code_challenge_method") !== "S256") {
    return refuse("invalid_request", "code_challenge_method must be S256");
  }
  let checked: { scopes: string[]; resource?: string };
  try {
    checked = parts.grants.checkScopesAndResource(params.get("scope"), params.get("resource"));
  } catch (error) {
    if (error instanceof OAuthError) return refuse(error.error, error.description);
    throw error;
  }

  const authorization = {
    client,
    redirectUri,
    codeChallenge,
    scopes: checked.scopes,
    ...(state !== undefined ? { state } : {}),
    ...(checked.resource ? { resource: checked.resource } : {}),
  };
  const auto = parts.autoApprove;
  if (auto) {
    const approval = {
      clientId: client.client_id,
      account: auto.account,
      scopes: checked.scopes,
      ...(auto.userId ? { userId: auto.userId } : {}),
      ...(checked.resource ? { resource: checked.resource } : {}),
    };
    return redirectResponse(parts.grants.approvedRedirect(approval, authorization));
  }
  return toConsent(parts, authorization, 302);
}

/** An authorization error shown to the person, with no link onwards. */
function errorPage(error: string, description: string, status = 400): Response {
  return pageResponse(
    status,
    "Sign-in refused",
    html`<h1>This sign-in request was refused</h1>
      <p class="error">${error}: ${description}</p>
      <p>Nothing was granted. Start again from your app; if it keeps happening, tell its developer.</p>`,
  );
}

/**
 * `GET /device[?user_code=]`: the signed-in person's form to enter (or check) the code; `POST`: a live code sends
 * this browser on to the consent page, bound to it as `/authorize` binds a browser's request.
 */
export async function handleDeviceVerification(
  parts: OAuthParts,
  request: Request,
  url: URL,
  clientIp: string,
): Promise<Response> {
  // Guessing user codes is the attack on this page (RFC 8628 §5.1): it shares /authorize's per-address limit.
  const limited = rateLimited(parts.limiters.authorize, clientIp, "page");
  if (limited) return limited;
  const sessions = parts.ctx.sessions;
  if (request.method !== "GET" && request.method !== "POST") {
    return pageResponse(405, "Sign in a device", html`<h1>Use the form</h1>`, { allow: "GET, POST" });
  }
  let typed = url.searchParams.get("user_code") ?? "";
  let form: URLSearchParams | undefined;
  if (request.method === "POST") {
    form = await readFormBody(request).catch(() => new URLSearchParams());
    typed = form.get("user_code") ?? "";
  }
  const code = normalizeUserCode(typed);
  const user = sessions.userFor(request);
  if (!user) {
    const next = `${DEVICE_VERIFICATION_PATH}${code ? `?user_code=${encodeURIComponent(formatUserCode(code))}` : ""}`;
    return redirectResponse(sessions.signInUrl(next), 303);
  }
  if (!form) return codePage(parts, request, user, code);
  if (!sessions.verifyCsrf(request, form.get("csrf") ?? undefined)) {
    return codePage(parts, request, user, code, "The form expired; enter the code again.", 403);
  }
  // The session's CSRF token names the browser session (verified just above, so it is there).
  const attempt = parts.devices.attemptEntry(sessions.csrfToken(request) ?? user.id, clientIp);
  if (!attempt.allowed) {
    const minutes = Math.ceil(attempt.retryAfterSeconds / 60);
    const page = codePage(
      parts,
      request,
      user,
      code,
      `Too many codes were entered in this browser; try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
      429,
    );
    page.headers.set("retry-after", String(attempt.retryAfterSeconds));
    return page;
  }
  const pending = parts.devices.pending(code);
  if (!pending) {
    return codePage(
      parts,
      request,
      user,
      code,
      "That code is not valid, or it expired or was used. Check the code your device shows, or start again there.",
    );
  }
  const lookup = await findClient(parts, pending.clientId);
  if (!lookup.ok) {
    return codePage(parts, request, user, code, "The app that asked is no longer registered here.");
  }
  const deviceRequest = {
    client: lookup.client,
    scopes: pending.scopes,
    userCode: pending.userCode,
    ...(pending.resource ? { resource: pending.resource } : {}),
  };
  return toConsent(parts, deviceRequest, 303, pending.expiresAt);
}

/** The code form, in the consent page's layout; a code from the link is shown for the person to compare. */
function codePage(
  parts: OAuthParts,
  request: Request,
  user: User,
  code: string,
  error?: string,
  status = error ? 400 : 200,
): Response {
  const shown = code.length === 8 ? formatUserCode(code) : "";
  return pageResponse(
    status,
    "Sign in a device",
    html`<h1>Sign in a device</h1>
      <p>Signed in as <b>${user.name}</b>. ${
        shown
          ? "Check that this is the code your device shows, then continue."
          : "Enter the code your device shows."
      }</p>
      ${error ? html`<p class="error">${error}</p>` : ""}
      <form method="post" action="${DEVICE_VERIFICATION_PATH}">
        <input type="hidden" name="csrf" value="${parts.ctx.sessions.csrfToken(request)}">
        <label>Code <input name="user_code" value="${shown}" autocomplete="off" autocapitalize="characters"
          spellcheck="false" maxlength="20" required></label>
        <button type="submit">Continue</button>
      </form>
      <p class="meta">Only enter a code from a device you are signing in yourself. Someone who sends you a code or
        a link is asking for access to your account.</p>`,
  );
}

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
  const started = parts.grants.pendingConsent(requestId);
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
  const release: Array<[string, string]> = [["set-cookie", releaseBrowser(parts, requestId)]];
  if (form.get("decision") !== "approve") {
    parts.grants.takePendingConsent(requestId);
    if (isDeviceConsent(pending)) {
      parts.devices.decide(pending.userCode);
      return deviceDecidedPage("denied", release);
    }
    const denied = parts.grants.authorizationResponse(
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
  parts.grants.takePendingConsent(requestId);
  const approval = {
    clientId: pending.client.client_id,
    userId: user.id,
    account,
    scopes: pending.scopes,
    ...(pending.resource ? { resource: pending.resource } : {}),
  };
  if (isDeviceConsent(pending)) {
    const approved = parts.devices.decide(pending.userCode, approval);
    return approved ? deviceDecidedPage("approved", release) : expiredPage();
  }
  return redirectResponse(parts.grants.approvedRedirect(approval, pending), 303, release);
}

/** The pending request with this id, unless it is a device's that was decided or expired meanwhile. */
function livePending(parts: OAuthParts, id: string): PendingConsent | undefined {
  const pending = parts.grants.pendingConsent(id);
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
  return parts.grants.pendingConsent(target.searchParams.get("request") ?? "");
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
