/** `/authorize` (RFC 6749 §4.1.1 with PKCE S256): checks the request, then auto-approves or sends the browser to consent. */
import { html } from "../html.js";
import { pageResponse, readFormBody, redirectResponse } from "../http.js";
import { ServiceError } from "../service-error.js";
import { CONSENT_PATH } from "./consent.js";
import { findClient, type OAuthParts } from "./parts.js";
import { OAuthError } from "./provider.js";
import { rateLimited } from "./rate-limits.js";
import { redirectUriProblem, redirectUriRegistered } from "./registration.js";

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
          parts.flows.authorizationResponse(redirectUri, { error, error_description: description }, state),
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
    checked = parts.flows.checkScopesAndResource(params.get("scope"), params.get("resource"));
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
    return redirectResponse(parts.flows.approvedRedirect(approval, authorization));
  }
  const id = parts.flows.newPendingId();
  const { nonce, setCookie } = parts.binding.bind(id);
  parts.flows.addPending(authorization, nonce, id);
  return redirectResponse(`${CONSENT_PATH}?request=${encodeURIComponent(id)}`, 302, [
    ["set-cookie", setCookie],
  ]);
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
