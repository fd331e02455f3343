/** RFC 8414 authorization server metadata and RFC 9728 protected resource metadata, to MCP 2026-07-28. */
import { CLIENT_ASSERTION_ALGORITHMS } from "./client-assertion.js";
import { DEVICE_AUTHORIZATION_PATH } from "./device.js";
import { CHAT_SCOPES, OFFLINE_ACCESS_SCOPE } from "./provider.js";
import { DEVICE_CODE_GRANT_TYPE, TOKEN_ENDPOINT_AUTH_METHODS } from "./registration.js";

/** `issuer` is exactly the URL the well-known address is built from (RFC 8414 §3.3). */
export function authorizationServerMetadata(
  issuer: string,
  offersDeviceGrant = true,
): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    revocation_endpoint: `${issuer}/revoke`,
    ...(offersDeviceGrant ? { device_authorization_endpoint: `${issuer}${DEVICE_AUTHORIZATION_PATH}` } : {}),
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: [
      "authorization_code",
      "refresh_token",
      "client_credentials",
      ...(offersDeviceGrant ? [DEVICE_CODE_GRANT_TYPE] : []),
    ],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS, "private_key_jwt"],
    token_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
    revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS, "private_key_jwt"],
    revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
    scopes_supported: [...CHAT_SCOPES, OFFLINE_ACCESS_SCOPE],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}

export function protectedResourceMetadata(issuer: string, resource: string): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...CHAT_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: resource.endsWith("/mcp") ? "Chat service MCP server" : "Chat service REST API v2",
  };
}
