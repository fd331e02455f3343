/** The grants without a person (client_credentials, jwt-bearer with a workload token) against a plain http authorization server that `--allow-http` allowed (not loopback), DPoP-bound. */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OAuthSession } from "../../../src/auth/index.js";
import { createInProcessReferenceServer } from "../../../src/server/index.js";
import { signJwt } from "../../../src/server/oauth/jwt.js";
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

describe("the jwt-bearer grant over plain http with allowHttp", () => {
  it("gets a DPoP-bound token whose proof names the http token endpoint it went to", async () => {
    const cluster = "https://cluster.example/oidc";
    const key = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const server = createInProcessReferenceServer({
      url: "http://chat.example.test",
      oauthClients: [{ client_id: "wl-http" }],
      dpop: "required",
      trustedWorkloadIssuers: [
        {
          issuer: cluster,
          jwks: { keys: [key.publicKey.export({ format: "jwk" }) as JsonWebKey] },
          account: "acme",
        },
      ],
    });
    const dir = scratchDir("cmb-jwt-bearer-http-");
    const tokenFile = join(dir, "token.jwt");
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: cluster, sub: "ci", aud: "http://chat.example.test", iat: now, exp: now + 600 };
    writeFileSync(tokenFile, await signJwt({ typ: "JWT", kid: randomUUID() }, claims, key.privateKey));
    const proofs: string[] = [];
    try {
      const session = new OAuthSession({
        serverUrl: server.mcpUrl,
        configDir: join(dir, "config"),
        tokenStore: "file",
        allowHttp: true,
        clientId: "wl-http",
        workloadIdentity: { tokenFile },
        dpop: true,
        env: { PATH: process.env.PATH ?? "" },
        fetch: (input, init) => {
          const request = new Request(input, init);
          const proof = request.headers.get("dpop");
          if (request.url.endsWith("/token") && proof) proofs.push(proof);
          return server.fetch(input, init);
        },
      });
      await session.signIn();
      expect(await session.accessToken()).toMatch(/\S/);
      const htu = proofs.map(
        (proof) => JSON.parse(Buffer.from(proof.split(".")[1]!, "base64url").toString()).htu,
      );
      expect(htu.length).toBeGreaterThan(0);
      for (const url of htu) expect(url).toMatch(/^http:\/\/chat\.example\.test\/.*token$/);
    } finally {
      await server.close();
    }
  });
});
