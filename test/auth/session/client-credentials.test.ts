/** The client_credentials grant against a plain http authorization server that `--allow-http` allowed (not loopback). */
import { describe, expect, it } from "vitest";
import { OAuthSession } from "../../../src/auth/index.js";
import { createInProcessReferenceServer } from "../../../src/server/index.js";
import { scratchDir } from "../../support/scratch-dir.js";

const SECRET = "cc-secret-http-4e1b";

describe("client credentials over plain http with allowHttp", () => {
  it("gets a token from the http token endpoint the metadata names, as the other grants do", async () => {
    // A server on a non-loopback http origin, in-process: the SDK alone refuses such a token endpoint.
    const server = createInProcessReferenceServer({
      url: "http://chat.example.test",
      oauthClients: [{ client_id: "ci-http", client_secret: SECRET, client_credentials_account: "acme" }],
    });
    const sent: string[] = [];
    try {
      const session = new OAuthSession({
        serverUrl: server.mcpUrl,
        configDir: scratchDir("cmb-client-credentials-http-"),
        tokenStore: "file",
        allowHttp: true,
        clientId: "ci-http",
        clientSecret: SECRET,
        clientCredentials: {},
        env: { PATH: process.env.PATH ?? "" },
        fetch: (input, init) => {
          sent.push(new Request(input, init).url);
          return server.fetch(input, init);
        },
      });
      await session.signIn();
      const token = await session.accessToken();
      expect(token).toMatch(/\S/);
      expect(sent.some((url) => url.startsWith("http://chat.example.test/") && url.endsWith("/token"))).toBe(
        true,
      );
      // The token is the resource's: the MCP endpoint takes it.
      const answer = await server.fetch(server.mcpUrl, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      expect(answer.status).not.toBe(401);
    } finally {
      await server.close();
    }
  });
});
