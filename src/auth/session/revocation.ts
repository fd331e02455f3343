/** Signing out: RFC 7009 revocation of both tokens, authenticated as the token endpoint would be (loaded only on sign-out). */
import * as z from "zod";
import type { StoredLogin } from "../stored-login.js";
import type { SessionContext } from "./context.js";
import { authenticateClient } from "./token-endpoint.js";

// RFC 7009 fields of RFC 8414 metadata (the endpoint itself was vetted as http(s) during discovery).
const RevocationMetadataSchema = z.object({
  revocation_endpoint: z.string().optional(),
  revocation_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});

const REVOCATION_TIMEOUT_MS = 5_000;

/** Revokes the refresh token, then the access token, where the authorization server offers revocation. */
export async function revokeLogin(context: SessionContext, login: StoredLogin): Promise<void> {
  const server = await context.metadata.get();
  const revocation = RevocationMetadataSchema.safeParse(server.metadata ?? {});
  const endpoint = revocation.success ? revocation.data.revocation_endpoint : undefined;
  const client = login.client;
  if (!endpoint || !client || !login.tokens) return;
  if (server.authorizationServerUrl !== login.authorizationServerUrl) return;
  const methods =
    revocation.data?.revocation_endpoint_auth_methods_supported ??
    server.metadata?.token_endpoint_auth_methods_supported ??
    [];
  const { refreshToken, accessToken } = login.tokens;
  for (const [token, hint] of [
    [refreshToken, "refresh_token"],
    [accessToken, "access_token"],
  ] as const) {
    if (!token) continue;
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers = new Headers({ "Content-Type": "application/x-www-form-urlencoded" });
    authenticateClient(client, methods, headers, body);
    const response = await context.fetchFn(endpoint, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(REVOCATION_TIMEOUT_MS),
    });
    await response.body?.cancel();
  }
}
