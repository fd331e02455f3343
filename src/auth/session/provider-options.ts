/** What some identity providers need of a sign-in (extra authorization parameters, registration metadata, the callback's path and success page), checked so that none changes what the protocol depends on. */

/** The loopback callback's default path, and where its one-time start pages live. */
export const CALLBACK_PATH = "/callback";
export const START_PATH = "/start/";

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

/** Why `path` cannot be the callback's path (`--callback-path`), or undefined when it can. */
export function callbackPathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) return 'the callback path must start with "/", e.g. /oauth/callback';
  if (/[?#]/.test(path)) return "the callback path is a path only, without a query or fragment";
  if (!/^[A-Za-z0-9\-._~/%!$&'()*+,;=:@]{1,200}$/.test(path))
    return "the callback path has characters a URL path does not allow (or is over 200 long)";
  // A path the URL parser rewrites (dot segments, `%2e%2e`) never matches a request's, and may climb elsewhere:
  // `/a/../start/x` is the start page. Only a plain path, already in its normal form, is taken.
  const normalised = new URL(path, "http://127.0.0.1").pathname;
  if (normalised !== path || path.includes("//") || /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path)) {
    return `the callback path must be a plain path, without "." or ".." segments or empty ones (it reads as ${normalised})`;
  }
  if (path.startsWith(START_PATH) || `${path}/` === START_PATH)
    return `the callback path cannot be under ${START_PATH}: the sign-in's start page lives there`;
  return undefined;
}

/**
 * Why `url` cannot be where the browser goes after a successful sign-in (`--auth-success-url`): an http(s) URL
 * without credentials, plain http only to loopback unless `allowHttp`.
 */
export function successUrlProblem(url: string, allowHttp = false): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed) return "the success page must be a URL, e.g. https://example.com/signed-in";
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    return `the success page must be an http(s) URL, not ${parsed.protocol}`;
  if (parsed.username || parsed.password) return "the success page URL must not contain credentials";
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(parsed.hostname);
  if (parsed.protocol === "http:" && !loopback && !allowHttp)
    return "the success page must be https (plain http only to loopback, or with --allow-http)";
  return undefined;
}
