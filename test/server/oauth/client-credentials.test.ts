/** The reference server's `client_credentials` grant (RFC 6749 §4.4) for confidential clients: secrets and `private_key_jwt` (RFC 7523 §2.2), through its fetch handler. */
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from "node:crypto";
import { createPrivateKeyJwtAuth } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, it } from "vitest";
import { createInProcessReferenceServer } from "../../../src/server/in-process.js";

const BASE = "http://127.0.0.1:8787";
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

const keys = {
  ES256: generateKeyPairSync("ec", { namedCurve: "P-256" }),
  RS256: generateKeyPairSync("rsa", { modulusLength: 2048 }),
  EdDSA: generateKeyPairSync("ed25519"),
};
const strangerKey = generateKeyPairSync("ec", { namedCurve: "P-256" });
const publicJwk = (key: KeyObject) => key.export({ format: "jwk" }) as JsonWebKey;

const server = createInProcessReferenceServer({
  rateLimit: false,
  oauthClients: [
    { client_id: "ci-secret", client_secret: "s3cret-value", client_credentials_account: "acme" },
    ...Object.entries(keys).map(([alg, pair]) => ({
      client_id: `ci-${alg}`,
      jwks: { keys: [publicJwk(pair.publicKey)] },
      client_credentials_account: "studio",
    })),
    { client_id: "browser-only", client_secret: "other-secret", redirect_uris: ["http://127.0.0.1:1/cb"] },
  ],
});
afterAll(() => server.close());

async function token(
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await server.fetch(`${BASE}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
});

/** An assertion as the MCP SDK's client makes it, with claims a test may change. */
async function assertion(
  alg: keyof typeof keys,
  options: {
    clientId?: string;
    key?: KeyObject;
    audience?: string;
    lifetimeSeconds?: number;
    claims?: Record<string, unknown>;
  } = {},
): Promise<string> {
  const params = new URLSearchParams();
  const clientId = options.clientId ?? `ci-${alg}`;
  await createPrivateKeyJwtAuth({
    issuer: clientId,
    subject: clientId,
    privateKey: (options.key ?? keys[alg].privateKey).export({ format: "jwk" }) as Record<string, unknown>,
    alg,
    audience: options.audience ?? BASE,
    ...(options.lifetimeSeconds !== undefined ? { lifetimeSeconds: options.lifetimeSeconds } : {}),
    ...(options.claims ? { claims: options.claims } : {}),
  })(new Headers(), params, new URL(`${BASE}/token`), undefined);
  return params.get("client_assertion") ?? "";
}

/** An ES256 assertion with exactly these claims (the SDK always sets iss, sub and jti itself). */
function handSigned(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const signed = `${part({ alg: "ES256", typ: "JWT" })}.${part({ aud: BASE, exp: now + 60, ...claims })}`;
  const signature = sign("sha256", Buffer.from(signed), {
    key: keys.ES256.privateKey,
    dsaEncoding: "ieee-p1363",
  });
  return `${signed}.${signature.toString("base64url")}`;
}

const withAssertion = (jwt: string, extra: Record<string, string> = {}) => ({
  grant_type: "client_credentials",
  client_assertion_type: ASSERTION_TYPE,
  client_assertion: jwt,
  ...extra,
});

describe("metadata", () => {
  it("advertises the grant, private_key_jwt and its signing algorithms", async () => {
    const metadata = await (await server.fetch(`${BASE}/.well-known/oauth-authorization-server`)).json();
    expect(metadata.grant_types_supported).toContain("client_credentials");
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(["client_secret_basic", "client_secret_post", "private_key_jwt"]),
    );
    expect(metadata.token_endpoint_auth_signing_alg_values_supported).toEqual(["RS256", "ES256", "EdDSA"]);
  });
});

describe("client_credentials with a secret", () => {
  it("issues an access token (and no refresh token) for the configured account, with client_secret_basic", async () => {
    const { status, body } = await token(
      { grant_type: "client_credentials", resource: `${BASE}/v2` },
      basic("ci-secret", "s3cret-value"),
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ token_type: "Bearer", account: "acme", scope: "chat:read chat:write" });
    expect(body.refresh_token).toBeUndefined();
    const chats = await server.fetch(`${BASE}/v2/chats`, {
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    expect(chats.status).toBe(200);
  });

  it("takes client_secret_post too, and a narrower scope", async () => {
    const { status, body } = await token({
      grant_type: "client_credentials",
      client_id: "ci-secret",
      client_secret: "s3cret-value",
      scope: "chat:read",
    });
    expect(status).toBe(200);
    expect(body.scope).toBe("chat:read");
  });

  it.each([
    ["a wrong secret (basic)", {}, basic("ci-secret", "wrong"), 401, "invalid_client"],
    ["a wrong secret (post)", { client_id: "ci-secret", client_secret: "wrong" }, {}, 400, "invalid_client"],
    ["an unknown client", { client_id: "nobody", client_secret: "x" }, {}, 400, "invalid_client"],
    [
      "a client registered for browsers only",
      {},
      basic("browser-only", "other-secret"),
      400,
      "unauthorized_client",
    ],
    ["an unknown scope", { scope: "admin" }, basic("ci-secret", "s3cret-value"), 400, "invalid_scope"],
    [
      "another server's resource",
      { resource: "https://elsewhere.example/mcp" },
      basic("ci-secret", "s3cret-value"),
      400,
      "invalid_target",
    ],
  ])("refuses %s", async (_name, fields, headers, status, error) => {
    const answer = await token({ grant_type: "client_credentials", ...fields }, headers);
    expect(answer).toMatchObject({ status, body: { error } });
  });
});

describe("client_credentials with private_key_jwt", () => {
  it.each(Object.keys(keys) as (keyof typeof keys)[])("issues a token for a %s assertion", async (alg) => {
    const { status, body } = await token(withAssertion(await assertion(alg)));
    expect(status).toBe(200);
    expect(body.account).toBe("studio");
  });

  it("takes the token endpoint as the audience, and a client_id that matches", async () => {
    const jwt = await assertion("ES256", { audience: `${BASE}/token` });
    expect((await token(withAssertion(jwt, { client_id: "ci-ES256" }))).status).toBe(200);
  });

  it("refuses an assertion used a second time (jti)", async () => {
    const jwt = await assertion("ES256");
    expect((await token(withAssertion(jwt))).status).toBe(200);
    expect(await token(withAssertion(jwt))).toMatchObject({
      status: 400,
      body: { error: "invalid_client", error_description: expect.stringContaining("already used") },
    });
  });

  it.each([
    [
      "signed by a key not registered",
      () => assertion("ES256", { key: strangerKey.privateKey }),
      "signature",
    ],
    ["for another audience", () => assertion("ES256", { audience: "https://other.example" }), "aud"],
    ["expired", () => assertion("ES256", { lifetimeSeconds: -120 }), "expired"],
    ["living too long", () => assertion("ES256", { lifetimeSeconds: 7200 }), "exp"],
    [
      "whose iss is not the client",
      async () => handSigned({ iss: "someone-else", sub: "ci-ES256", jti: randomUUID() }),
      "iss",
    ],
    ["without a jti", async () => handSigned({ iss: "ci-ES256", sub: "ci-ES256" }), "jti"],
    ["of an unknown client", () => assertion("ES256", { clientId: "nobody" }), "client_id"],
    ["of a client with a secret", () => assertion("ES256", { clientId: "ci-secret" }), "no registered keys"],
    ["that is no JWT", async () => "not.a-jwt", "compact JWT"],
  ])("refuses an assertion %s", async (_name, make, why) => {
    expect(await token(withAssertion(await make()))).toMatchObject({
      status: 400,
      body: { error: "invalid_client", error_description: expect.stringContaining(why) },
    });
  });

  it("refuses a client_id that is not the assertion's sub, a wrong assertion type, and two methods at once", async () => {
    const jwt = () => assertion("ES256");
    for (const fields of [
      withAssertion("", { client_assertion: "" }),
      { ...withAssertion("x"), client_assertion_type: "urn:other" },
    ]) {
      expect((await token(fields)).body.error).toBe("invalid_client");
    }
    expect((await token(withAssertion(await jwt(), { client_id: "ci-RS256" }))).body.error).toBe(
      "invalid_client",
    );
    expect((await token(withAssertion(await jwt(), { client_secret: "x" }))).body.error).toBe(
      "invalid_client",
    );
    expect((await token(withAssertion(await jwt()), basic("ci-ES256", "x"))).body.error).toBe(
      "invalid_client",
    );
  });

  it("refuses a key client that sends no assertion", async () => {
    expect(await token({ grant_type: "client_credentials", client_id: "ci-ES256" })).toMatchObject({
      status: 400,
      body: { error: "invalid_client" },
    });
  });
});

describe("registration of client_credentials clients", () => {
  it.each([
    [
      "an unknown account",
      { client_id: "c", client_secret: "s", client_credentials_account: "nowhere" },
      "nowhere",
    ],
    [
      "no secret and no keys",
      { client_id: "c", client_credentials_account: "acme" },
      "client_secret or jwks",
    ],
    [
      "a private key in its jwks",
      { client_id: "c", jwks: { keys: [keys.ES256.privateKey.export({ format: "jwk" }) as JsonWebKey] } },
      "private key",
    ],
  ])("refuses a client with %s", (_name, client, message) => {
    expect(() => createInProcessReferenceServer({ oauthClients: [client] })).toThrow(message);
  });
});
