/** The device authorization grant's two doors (RFC 8628): the endpoint where a device asks for codes, and the page where a person enters the code on the way to consent. */
import type { User } from "../context.js";
import { html } from "../html.js";
import { jsonResponse, pageResponse, readFormBody, redirectResponse } from "../http.js";
import { CONSENT_PATH } from "./consent.js";
import { formatUserCode, normalizeUserCode } from "./device-authorizations.js";
import { findClient, type OAuthParts } from "./parts.js";
import { OAuthError } from "./provider.js";
import { rateLimited } from "./rate-limits.js";
import { DEVICE_CODE_GRANT_TYPE } from "./registration.js";
import { answerOAuthErrors, authenticateClient, formOf, NO_STORE } from "./token.js";

export const DEVICE_AUTHORIZATION_PATH = "/device_authorization";
export const DEVICE_VERIFICATION_PATH = "/device";

/** RFC 8628 §3.1-3.2: an authenticated client with the device grant gets a device code and a user code. */
export async function handleDeviceAuthorization(
  parts: OAuthParts,
  request: Request,
  clientIp: string,
): Promise<Response> {
  const limited = rateLimited(parts.limiters.token, clientIp, "json");
  if (limited) return limited;
  return answerOAuthErrors(async () => {
    const form = await formOf(request);
    const client = await authenticateClient(parts, request, form);
    if (!client.grant_types.includes(DEVICE_CODE_GRANT_TYPE)) {
      throw new OAuthError(
        "unauthorized_client",
        `the client is not registered for ${DEVICE_CODE_GRANT_TYPE}`,
      );
    }
    const checked = parts.flows.checkScopesAndResource(form.get("scope"), form.get("resource"));
    const asked = {
      clientId: client.client_id,
      scopes: checked.scopes,
      ...(checked.resource ? { resource: checked.resource } : {}),
    };
    const started = parts.devices.start(asked);
    const auto = parts.autoApprove;
    // As at /authorize: no page, the request is approved for the configured account at once.
    if (auto) {
      parts.devices.approve(started.userCode, {
        ...asked,
        account: auto.account,
        ...(auto.userId ? { userId: auto.userId } : {}),
      });
    }
    const verificationUri = `${parts.issuer}${DEVICE_VERIFICATION_PATH}`;
    return jsonResponse(
      200,
      {
        device_code: started.deviceCode,
        user_code: started.userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(started.userCode)}`,
        expires_in: started.expiresIn,
        interval: started.interval,
      },
      NO_STORE,
    );
  });
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
  const id = parts.flows.newPendingId();
  const { nonce, setCookie } = parts.binding.bind(id);
  parts.flows.addPending(
    {
      client: lookup.client,
      scopes: pending.scopes,
      userCode: pending.userCode,
      ...(pending.resource ? { resource: pending.resource } : {}),
    },
    nonce,
    id,
    pending.expiresAt,
  );
  return redirectResponse(`${CONSENT_PATH}?request=${encodeURIComponent(id)}`, 303, [
    ["set-cookie", setCookie],
  ]);
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
