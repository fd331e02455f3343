/** Signing out: RFC 7009 revocation of both tokens, authenticated as the token endpoint would be (loaded only on sign-out). */
import { selectClientAuthMethod } from "@modelcontextprotocol/client";
import * as z from "zod";
import type { StoredLogin } from "../stored-login.js";
import type { SessionContext } from "./context.js";

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
  const method = selectClientAuthMethod(
    client,
    revocation.data?.revocation_endpoint_auth_methods_supported ??
      server.metadata?.token_endpoint_auth_methods_supported ??
      [],
  );
  const tokens = login.tokens;
  const pairs: [string, string][] = [
    ...(tokens.refreshToken ? [[tokens.refreshToken, "refresh_token"] as [string, string]] : []),
    [tokens.accessToken, "access_token"],
  ];
  for (const [token, hint] of pairs) {
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers = new Headers({ "Content-Type": "application/x-www-form-urlencoded" });
    if (method === "client_secret_basic" && client.client_secret) {
      const credentials = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`;
      headers.set("Authorization", `Basic ${Buffer.from(credentials).toString("base64")}`);
    } else {
      body.set("client_id", client.client_id);
      if (method === "client_secret_post" && client.client_secret)
        body.set("client_secret", client.client_secret);
    }
    const response = await context.fetchFn(endpoint, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(REVOCATION_TIMEOUT_MS),
    });
    await response.body?.cancel();
  }
}
