/** What refresh, sign-in and sign-out need (the SDK's OAuth client, discovery, the callback server, the browser): loaded only then. */
import { OAuthError } from "@modelcontextprotocol/client";
import { z } from "zod";

export {
  exchangeAuthorization,
  IssuerMismatchError,
  OAuthError,
  refreshAuthorization,
  registerClient,
  selectClientAuthMethod,
  startAuthorization,
  validateAuthorizationResponseIssuer,
} from "@modelcontextprotocol/client";
export { chooseScope, discoverServer } from "./discovery.js";
export { startLoopbackCallback } from "./loopback-callback.js";
export { assertBrowsableUrl, openUrl } from "./open-url.js";
export { presentSignInUrl } from "./sign-in-prompt.js";

/**
 * An OAuth error answer that says the grant or the client itself was refused (as opposed to `server_error` or
 * `temporarily_unavailable`, which a later attempt may get past): its code, else undefined.
 */
export function refusalCode(error: unknown): string | undefined {
  if (!(error instanceof OAuthError)) return undefined;
  return error.code === "server_error" || error.code === "temporarily_unavailable" ? undefined : error.code;
}

// RFC 7009 fields of RFC 8414 metadata (the endpoint itself was vetted as http(s) during discovery).
export const RevocationMetadataSchema = z.object({
  revocation_endpoint: z.string().optional(),
  revocation_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});
