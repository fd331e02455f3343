/** The reference server's jwt-bearer grant (RFC 7523 §2.1) and its enterprise IdP (SEP-990), through its handler: what it redeems and what it refuses, with the RFC's error. */
import { generateKeyPairSync, type KeyObject, randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createInProcessReferenceServer } from "../../../src/server/index.js";
import { signJwt } from "../../../src/server/oauth/jwt.js";

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const WORKLOAD_ISSUER = "https://cluster.example/oidc";
const workloadKey = generateKeyPairSync("ec", { namedCurve: "P-256" });
const strangerKey = generateKeyPairSync("ec", { namedCurve: "P-256" });
const enterpriseKey = generateKeyPairSync("rsa", { modulusLength: 2048 });
const ENTERPRISE_ISSUER = "https://idp.corp.example";
const jwkOf = (key: KeyObject) => key.export({ format: "jwk" }) as JsonWebKey;

const server = createInProcessReferenceServer({
  oauthClients: [{ client_id: "workload-app" }, { client_id: "xaa-app", client_secret: "xaa-secret" }],
  trustedWorkloadIssuers: [
    { issuer: WORKLOAD_ISSUER, jwks: { keys: [jwkOf(workloadKey.publicKey)] }, account: "acme" },
  ],
  trustedEnterpriseIdps: [
    { issuer: ENTERPRISE_ISSUER, jwks: { keys: [jwkOf(enterpriseKey.publicKey)] }, account: "studio" },
  ],
  referenceIdp: { clientId: "idp-app", clientSecret: "idp-secret", account: "acme", mcpClientId: "xaa-app" },
});
afterAll(() => server.close());

const now = () => Math.floor(Date.now() / 1000);

function workloadToken(claims: Record<string, unknown> = {}, key = workloadKey.privateKey): Promise<string> {
  return signJwt(
    { typ: "JWT" },
    {
      iss: WORKLOAD_ISSUER,
      sub: "system:serviceaccount:ci:deployer",
      aud: server.url,
      iat: now(),
      exp: now() + 600,
      ...claims,
    },
    key,
  );
}

async function token(form: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await server.fetch(`${server.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
});

describe("metadata", () => {
  it("advertises the jwt-bearer grant, and the reference IdP its token exchange", async () => {
    const metadata = await (
      await server.fetch(`${server.url}/.well-known/oauth-authorization-server`)
    ).json();
    expect(metadata.grant_types_supported).toContain(JWT_BEARER);
    const idp = await (await server.fetch(`${server.url}/.well-known/oauth-authorization-server/idp`)).json();
    expect(idp).toMatchObject({
      issuer: `${server.url}/idp`,
      token_endpoint: `${server.url}/idp/token`,
      grant_types_supported: ["urn:ietf:params:oauth:grant-type:token-exchange"],
    });
  });

  it("leaves the grant out when no issuer is trusted", async () => {
    const plain = createInProcessReferenceServer({});
    const metadata = await (await plain.fetch(`${plain.url}/.well-known/oauth-authorization-server`)).json();
    expect(metadata.grant_types_supported).not.toContain(JWT_BEARER);
    await plain.close();
  });
});

describe("workload identity tokens", () => {
  it("are redeemed for an access token of the issuer's account that works on /mcp's resource", async () => {
    const answer = await token({
      grant_type: JWT_BEARER,
      client_id: "workload-app",
      assertion: await workloadToken(),
      resource: server.mcpUrl,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: "Bearer", account: "acme" });
    expect(answer.body.refresh_token).toBeUndefined();
    // The same platform token is taken again (platforms hand out one token until they rotate it).
    const again = await token({
      grant_type: JWT_BEARER,
      client_id: "workload-app",
      assertion: await workloadToken(),
    });
    expect(again.status).toBe(200);
  });

  it.each([
    ["a wrong audience", () => workloadToken({ aud: "https://elsewhere.example" }), /aud/],
    ["an expired token", () => workloadToken({ iat: now() - 3600, exp: now() - 120 }), /expired/],
    ["a token not valid yet", () => workloadToken({ nbf: now() + 600 }), /nbf/],
    ["an unknown issuer", () => workloadToken({ iss: "https://stranger.example" }), /issuer/],
    ["another key's signature", () => workloadToken({}, strangerKey.privateKey), /signature/],
    ["no subject", () => workloadToken({ sub: "" }), /sub/],
    ["not a JWT", () => "not-a-jwt", /JWT/],
  ])("refuses %s with invalid_grant, never echoing the assertion", async (_, make, why) => {
    const assertion = await make();
    const answer = await token({ grant_type: JWT_BEARER, client_id: "workload-app", assertion });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_grant");
    expect(answer.body.error_description).toMatch(why);
    expect(JSON.stringify(answer.body)).not.toContain(assertion);
  });

  it("refuses a request without an assertion with invalid_request, and an unknown client with invalid_client", async () => {
    expect((await token({ grant_type: JWT_BEARER, client_id: "workload-app" })).body.error).toBe(
      "invalid_request",
    );
    const stranger = await token({
      grant_type: JWT_BEARER,
      client_id: "nobody",
      assertion: await workloadToken(),
    });
    expect(stranger.body.error).toBe("invalid_client");
  });

  it("refuses an ID-JAG from a workload issuer", async () => {
    const jag = await signJwt(
      { typ: "oauth-id-jag+jwt" },
      {
        iss: WORKLOAD_ISSUER,
        sub: "x",
        aud: server.url,
        exp: now() + 60,
        jti: randomUUID(),
        client_id: "workload-app",
      },
      workloadKey.privateKey,
    );
    const answer = await token({ grant_type: JWT_BEARER, client_id: "workload-app", assertion: jag });
    expect(answer.body.error).toBe("invalid_grant");
  });
});

describe("ID-JAGs of a trusted enterprise IdP", () => {
  const jag = (claims: Record<string, unknown> = {}) =>
    signJwt(
      { typ: "oauth-id-jag+jwt" },
      {
        iss: ENTERPRISE_ISSUER,
        sub: "alice@corp.example",
        aud: server.url,
        client_id: "xaa-app",
        resource: server.mcpUrl,
        scope: "chat:read",
        jti: randomUUID(),
        iat: now(),
        exp: now() + 300,
        ...claims,
      },
      enterpriseKey.privateKey,
    );

  it("are redeemed once, for the client they name, with no more than their scope", async () => {
    const assertion = await jag();
    const first = await token({ grant_type: JWT_BEARER, assertion }, basic("xaa-app", "xaa-secret"));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ account: "studio", scope: "chat:read" });
    const replay = await token({ grant_type: JWT_BEARER, assertion }, basic("xaa-app", "xaa-secret"));
    expect(replay.body).toMatchObject({
      error: "invalid_grant",
      error_description: expect.stringMatching(/already/),
    });
    const wider = await token(
      { grant_type: JWT_BEARER, assertion: await jag(), scope: "chat:write" },
      basic("xaa-app", "xaa-secret"),
    );
    expect(wider.body.error).toBe("invalid_scope");
  });

  it("refuses one issued to another client, or for another audience", async () => {
    const other = await token(
      { grant_type: JWT_BEARER, assertion: await jag({ client_id: "someone" }) },
      basic("xaa-app", "xaa-secret"),
    );
    expect(other.body).toMatchObject({
      error: "invalid_grant",
      error_description: expect.stringMatching(/client_id/),
    });
    const audience = await token(
      { grant_type: JWT_BEARER, assertion: await jag({ aud: `${server.url}/token` }) },
      basic("xaa-app", "xaa-secret"),
    );
    expect(audience.body.error).toBe("invalid_grant");
  });
});

describe("the reference IdP", () => {
  async function idToken(apiKey: string) {
    const response = await server.fetch(`${server.url}/idp/id-token`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  async function exchange(subjectToken: string, overrides: Record<string, string> = {}) {
    const response = await server.fetch(`${server.url}/idp/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
        requested_token_type: "urn:ietf:params:oauth:token-type:id-jag",
        subject_token: subjectToken,
        subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
        audience: server.url,
        resource: server.mcpUrl,
        client_id: "idp-app",
        client_secret: "idp-secret",
        ...overrides,
      }).toString(),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  it("gives the account's dev API key an ID token, exchanges it for an ID-JAG, which this server redeems", async () => {
    const id = await idToken(server.apiKeys.acme!);
    expect(id.status).toBe(200);
    const exchanged = await exchange(id.body.id_token!);
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.issued_token_type).toBe("urn:ietf:params:oauth:token-type:id-jag");
    const header = JSON.parse(
      Buffer.from(exchanged.body.access_token!.split(".")[0]!, "base64url").toString(),
    );
    expect(header.typ).toBe("oauth-id-jag+jwt");
    const redeemed = await token(
      { grant_type: JWT_BEARER, assertion: exchanged.body.access_token! },
      basic("xaa-app", "xaa-secret"),
    );
    expect(redeemed.status).toBe(200);
    expect(redeemed.body.account).toBe("acme");
  });

  it("refuses another account's key, a wrong IdP secret, a foreign ID token and another audience", async () => {
    expect((await idToken(server.apiKeys.studio!)).status).toBe(401);
    const id = (await idToken(server.apiKeys.acme!)).body.id_token!;
    expect((await exchange(id, { client_secret: "wrong" })).body.error).toBe("invalid_client");
    expect((await exchange(await workloadToken())).body.error).toBe("invalid_grant");
    expect((await exchange(id, { audience: "https://elsewhere.example" })).body.error).toBe("invalid_target");
  });
});
