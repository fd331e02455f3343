/** What some identity providers need of a sign-in (extra authorization parameters, registration metadata), checked so that neither changes a field the protocol depends on. */
import { callbackPathProblem, successUrlProblem } from "../loopback-requests.js";

/** The authorization request's own parameters: PKCE, `state`, the redirect and the client are the sign-in's safety. */
export const PROTOCOL_AUTHORIZE_PARAMS: readonly string[] = [
  "state",
  "code_challenge",
  "code_challenge_method",
  "redirect_uri",
  "client_id",
  "response_type",
  "resource",
  "scope",
];

/** The registration fields a loopback sign-in with PKCE and refresh needs as they are (RFC 7591, RFC 8252). */
export const SIGN_IN_CLIENT_METADATA = {
  // A program on the user's machine with a loopback redirect (RFC 8252), as MCP 2026-07-28 asks to say.
  application_type: "native",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
} as const;

/** Why `key` cannot be an extra authorization parameter, or undefined when it can. */
export function authorizeParamProblem(key: string): string | undefined {
  if (!/^[\x21-\x7e]+$/.test(key) || key.includes("=")) return `"${key}" is not a parameter name`;
  if (PROTOCOL_AUTHORIZE_PARAMS.includes(key.toLowerCase()))
    return `"${key}" is the sign-in's own parameter and cannot be overridden`;
  return undefined;
}

/** Why `metadata` cannot be merged over the registration's, or undefined when it can. */
export function clientMetadataProblem(metadata: Record<string, unknown>): string | undefined {
  if ("redirect_uris" in metadata) return `"redirect_uris" is set by the bridge (its loopback callback)`;
  for (const [field, needed] of Object.entries(SIGN_IN_CLIENT_METADATA)) {
    if (field in metadata && JSON.stringify(metadata[field]) !== JSON.stringify(needed))
      return `"${field}" is set by the bridge to ${JSON.stringify(needed)}; the sign-in needs it so`;
  }
  return undefined;
}

/** Throws when the options would override the protocol; the command lines refuse these before this. */
export function assertProviderOptions(options: {
  authorizeParams?: Record<string, string> | undefined;
  clientMetadata?: Record<string, unknown> | undefined;
  callbackPath?: string | undefined;
  authSuccessUrl?: string | undefined;
  allowHttp?: boolean | undefined;
}): void {
  for (const key of Object.keys(options.authorizeParams ?? {})) {
    const problem = authorizeParamProblem(key);
    if (problem) throw new Error(`Extra authorization parameter: ${problem}.`);
  }
  const problem = options.clientMetadata && clientMetadataProblem(options.clientMetadata);
  if (problem) throw new Error(`Client metadata: ${problem}.`);
  const pathProblem = options.callbackPath !== undefined && callbackPathProblem(options.callbackPath);
  if (pathProblem) throw new Error(`Callback path: ${pathProblem}.`);
  const successProblem =
    options.authSuccessUrl !== undefined && successUrlProblem(options.authSuccessUrl, options.allowHttp);
  if (successProblem) throw new Error(`Success page: ${successProblem}.`);
}

/** The RFC 8707 `resource` to send, or none under `disableResourceParameter`. */
export function resourceParameter(
  options: { disableResourceParameter?: boolean | undefined },
  resource: string | undefined,
): string | undefined {
  return options.disableResourceParameter ? undefined : resource;
}

/** `started`'s authorization URL with the extra parameters set (a provider default such as `prompt` replaced). */
export function withAuthorizeParams<T extends { authorizationUrl: URL }>(
  started: T,
  params: Record<string, string> | undefined,
): T {
  for (const [key, value] of Object.entries(params ?? {})) {
    // Checked when the session was made; checked again where the URL is built.
    if (authorizeParamProblem(key)) continue;
    started.authorizationUrl.searchParams.set(key, value);
  }
  return started;
}
