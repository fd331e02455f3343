/** What refresh, sign-in and sign-out need (the SDK's OAuth client, discovery, the callback server, the browser): loaded only then. */
import { z } from "zod";

export {
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  selectClientAuthMethod,
  startAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
export { OAuthError, ServerError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
export { chooseScope, discoverServer } from "./discovery.js";
export { startLoopbackCallback } from "./loopback-callback.js";
export { assertBrowsableUrl, openUrl } from "./open-url.js";

// RFC 7009 fields of RFC 8414 metadata (the endpoint itself was vetted as http(s) during discovery).
export const RevocationMetadataSchema = z.object({
  revocation_endpoint: z.string().optional(),
  revocation_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});
