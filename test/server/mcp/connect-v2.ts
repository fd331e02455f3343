/** Connects an MCP SDK v2 client (legacy era by default, as the SDK's default) to `/mcp`, signing in through a headless OAuth provider. */
import {
  Client,
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";

export async function connectMcpV2(
  mcpUrl: string,
  provider: { takeCode(): string; lastCallback?: URL },
  options: { modern?: boolean } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const authProvider = provider as unknown as OAuthClientProvider;
  const attempt = async () => {
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider });
    const client = new Client(
      { name: "oauth-test", version: "1.0.0" },
      options.modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
    );
    await client.connect(transport);
    return { client, transport };
  };
  try {
    return await attempt();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider });
  // The whole callback: the SDK v2 checks its RFC 9207 `iss` against the authorization server's issuer.
  provider.takeCode();
  if (!provider.lastCallback) throw new Error("The sign-in ended on no callback");
  await transport.finishAuth(provider.lastCallback.searchParams);
  return attempt();
}
