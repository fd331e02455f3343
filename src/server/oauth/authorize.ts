/** The person's side of the authorization server: `/authorize`, the `/device` code page and the consent page both lead to, in the browser that started each request. */
import { randomUUID } from "node:crypto";
import type { Account, User } from "../context.js";
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

const CONSENT_PATH = "/oauth/consent";
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
  const { name, options } = bindingCookie(parts, id);
  const setCookie = serializeCookie(name, nonce, { ...options, maxAgeMs: PENDING_CONSENT_TTL_MS });
  return redirectResponse(`${CONSENT_PATH}?request=${encodeURIComponent(id)}`, status, [
    ["set-cookie", setCookie],
  ]);
}

function boundToThisBrowser(parts: OAuthParts, request: Request, pending: PendingConsent): boolean {
  const presented = readCookie(request, bindingCookie(parts, pending.id).name);
  return presented !== undefined && sameSecret(pending.browserNonce, presented);
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
  else if (request.method !== "POST") return errorPage("invalid_request", "use GET or POST", 405);
  else {
    try {
      params = await readFormBody(request);
    } catch (error) {
      return errorPage("invalid_request", error instanceof ServiceError ? error.message : "unreadable form");
    }
  }

  // Until the client and its redirect URI are known good, errors are shown here, never redirected.
  const clientId = params.get("client_id");
  if (!clientId) return errorPage("invalid_request", "client_id is required");
  const lookup = await findClient(parts, clientId);
  if (!lookup.ok) return errorPage("invalid_client", lookup.reason);
  const { client, vouched } = lookup;
  const requestedRedirect = params.get("redirect_uri");
  if (requestedRedirect === null && client.redirect_uris.length !== 1)
    return errorPage("invalid_request", "redirect_uri is required: the client registered several");
  const redirectUri = requestedRedirect ?? (client.redirect_uris[0] as string);
  const problem = redirectUriProblem(redirectUri);
  if (problem) return errorPage("invalid_request", `redirect_uri ${problem}`);
  if (!redirectUriRegistered(client.redirect_uris, redirectUri))
    return errorPage("invalid_request", "redirect_uri is not registered for this client");

  const state = params.get("state") ?? undefined;
  const codeChallenge = params.get("code_challenge") ?? "";
  let checked: { scopes: string[]; resource?: string };
  try {
    if (params.get("response_type") !== "code")
      throw new OAuthError("unsupported_response_type", "response_type must be code");
    if (!/^[A-Za-z0-9_-]{43}$/.test(codeChallenge))
      throw new OAuthError("invalid_request", "code_challenge is required (PKCE, the S256 method)");
    if (params.get("code_challenge_method") !== "S256")
      throw new OAuthError("invalid_request", "code_challenge_method must be S256");
    checked = parts.grants.checkScopesAndResource(params.get("scope"), params.get("resource"));
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    // RFC 9700 §4.11.2: an error goes back to the client only when the server can vouch for its redirect URI.
    if (!vouched) return errorPage(error.error, error.description);
    const params = { error: error.error, error_description: error.description };
    return redirectResponse(parts.grants.authorizationResponse(redirectUri, params, state));
  }
  const authorization = {
    client,
    redirectUri,
    codeChallenge,
    ...checked,
    ...(state !== undefined ? { state } : {}),
  };
  const auto = parts.autoApprove;
  if (!auto) return toConsent(parts, authorization, 302);
  return redirectResponse(parts.grants.approvedRedirect({ clientId, ...auto, ...checked }, authorization));
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
  if (request.method !== "GET" && request.method !== "POST")
    return pageResponse(405, "Sign in a device", html`<h1>Use the form</h1>`, { allow: "GET, POST" });
  const form =
    request.method === "POST" ? await readFormBody(request).catch(() => new URLSearchParams()) : undefined;
  const code = normalizeUserCode((form ?? url.searchParams).get("user_code") ?? "");
  const user = sessions.userFor(request);
  if (!user) {
    const next = `${DEVICE_VERIFICATION_PATH}${code ? `?user_code=${encodeURIComponent(formatUserCode(code))}` : ""}`;
    return redirectResponse(sessions.signInUrl(next), 303);
  }
  /** The code form, in the consent page's layout; a code from the link is shown for the person to compare. */
  const codePage = (error?: string, status = error ? 400 : 200) => {
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
        <input type="hidden" name="csrf" value="${sessions.csrfToken(request)}">
        <label>Code <input name="user_code" value="${shown}" autocomplete="off" autocapitalize="characters"
          spellcheck="false" maxlength="20" required></label>
        <button type="submit">Continue</button>
      </form>
      <p class="meta">Only enter a code from a device you are signing in yourself. Someone who sends you a code or
        a link is asking for access to your account.</p>`,
    );
  };
  if (!form) return codePage();
  if (!sessions.verifyCsrf(request, form.get("csrf") ?? undefined))
    return codePage("The form expired; enter the code again.", 403);
  // The session's CSRF token names the browser session (verified just above, so it is there).
  const attempt = parts.devices.attemptEntry(sessions.csrfToken(request) ?? user.id, clientIp);
  if (!attempt.allowed) {
    const minutes = Math.ceil(attempt.retryAfterSeconds / 60);
    const why = `Too many codes were entered in this browser; try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
    const page = codePage(why, 429);
    page.headers.set("retry-after", String(attempt.retryAfterSeconds));
    return page;
  }
  const pending = parts.devices.pending(code);
  if (!pending) {
    return codePage(
      "That code is not valid, or it expired or was used. Check the code your device shows, or start again there.",
    );
  }
  const lookup = await findClient(parts, pending.clientId);
  if (!lookup.ok) return codePage("The app that asked is no longer registered here.");
  const { userCode, scopes, resource, expiresAt } = pending;
  return toConsent(
    parts,
    { client: lookup.client, scopes, userCode, ...(resource ? { resource } : {}) },
    303,
    expiresAt,
  );
}

/** `GET`/`POST` of the consent page, and the sign-in hop on the way to it; undefined for every other request. */
export async function handleConsent(
  parts: OAuthParts,
  request: Request,
  url: URL,
): Promise<Response | undefined> {
  if (url.pathname === "/signin" && (request.method === "GET" || request.method === "POST")) {
    // The sign-in hop on the way to a consent page is refused in another browser too, before any password is typed.
    let next = url.searchParams.get("next");
    // Read from a copy: the sign-in page itself reads the form afterwards.
    if (request.method === "POST")
      next = (await readFormBody(request.clone()).catch(() => new URLSearchParams())).get("next") ?? next;
    const pending = consentRequestIn(next, parts);
    return pending && !boundToThisBrowser(parts, request, pending) ? otherBrowserPage() : undefined;
  }
  if (url.pathname !== CONSENT_PATH) return undefined;
  const sessions = parts.ctx.sessions;
  if (request.method === "GET") {
    const pending = livePending(parts, url.searchParams.get("request") ?? "");
    if (!pending) return expiredPage();
    if (!boundToThisBrowser(parts, request, pending)) return otherBrowserPage();
    const user = sessions.userFor(request);
    if (!user) return redirectResponse(sessions.signInUrl(`${url.pathname}${url.search}`), 303);
    return consentPage(parts, request, pending, user);
  }
  if (request.method !== "POST") return undefined;
  const form = await readFormBody(request).catch(() => undefined);
  if (!form) return expiredPage();
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
    const body = html`<h1>Form expired</h1><p class="error">Start the sign-in again from your client.</p>`;
    return pageResponse(403, "Authorize", body);
  }
  const pending = livePending(parts, requestId);
  if (!pending) return expiredPage();
  const approve = form.get("decision") === "approve";
  const account = form.get("account") ?? "";
  if (approve && !choicesFor(user, parts.ctx.accounts).some((choice) => choice.slug === account))
    return consentPage(parts, request, pending, user, "Choose one of your accounts or teams.");
  parts.grants.takePendingConsent(requestId);
  const { name, options } = bindingCookie(parts, requestId);
  const release: Array<[string, string]> = [["set-cookie", clearCookie(name, options)]];
  const { resource } = pending;
  const approval = { clientId: pending.client.client_id, userId: user.id, account, scopes: pending.scopes };
  const approved = approve ? { ...approval, ...(resource ? { resource } : {}) } : undefined;
  if (isDeviceConsent(pending)) {
    // Nothing to redirect to: the device learns the decision when it next polls.
    if (!parts.devices.decide(pending.userCode, approved) && approved) return expiredPage();
    const body = approved
      ? html`<h1>Device approved</h1><p>Go back to your device: it finishes signing in by itself within a few seconds. You can close this page.</p>`
      : html`<h1>Sign-in denied</h1><p>Nothing was granted; your device is told so when it next asks. You can close this page.</p>`;
    return pageResponse(200, "Authorize", body, release);
  }
  if (approved) return redirectResponse(parts.grants.approvedRedirect(approved, pending), 303, release);
  const denied = { error: "access_denied", error_description: "The user denied the authorization request" };
  return redirectResponse(
    parts.grants.authorizationResponse(pending.redirectUri, denied, pending.state),
    303,
    release,
  );
}

/** The pending request with this id, unless it is a device's that was decided or expired meanwhile. */
function livePending(parts: OAuthParts, id: string): PendingConsent | undefined {
  const pending = parts.grants.pendingConsent(id);
  if (pending && isDeviceConsent(pending) && !parts.devices.pending(pending.userCode)) return undefined;
  return pending;
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
  const clientName = pending.client.client_name ?? pending.client.client_id;
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
        <input type="hidden" name="csrf" value="${parts.ctx.sessions.csrfToken(request)}">
        <fieldset><legend>Use this account or team</legend>
          ${choicesFor(user, parts.ctx.accounts).map(
            (account, index) =>
              html`<label><input type="radio" name="account" value="${account.slug}"${index === 0 ? html` checked` : ""}>
                ${account.kind === "personal" ? "Personal account" : `Team ${account.name}`} (${account.slug})</label>`,
          )}
        </fieldset>
        <button type="submit" name="decision" value="approve">Approve</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </form>`,
  );
  if (isDeviceConsent(pending)) return page;
  // Browsers apply CSP `form-action` to the redirect that follows a form post, and the shared page layout allows
  // only 'self': widen it, for this response only, to the client's redirect target.
  const target = new URL(pending.redirectUri);
  const source =
    target.protocol === "http:" || target.protocol === "https:" ? target.origin : target.protocol;
  const policy = page.headers.get("content-security-policy");
  if (policy)
    page.headers.set(
      "content-security-policy",
      policy.replace("form-action 'self'", `form-action 'self' ${source}`),
    );
  return page;
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
  const body = html`<h1>Authorization request expired</h1><p>Start the sign-in again from your client.</p>`;
  return pageResponse(400, "Authorize", body);
}
