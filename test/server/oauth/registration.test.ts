/** `/register` (RFC 7591) to MCP 2026-07-28: every registered field answered, unsupported values refused, unknown fields dropped, small; through the server's handler (no port). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReferenceServer } from "../../../src/server/index.js";
import { MAX_REGISTRATION_BYTES } from "../../../src/server/oauth/grants.js";
import {
  authorizeUrl,
  CALLBACK_URL,
  followToCallback,
  pkcePair,
  postForm,
  startInProcessTestServer,
} from "./helpers.js";

let server: ReferenceServer;
beforeAll(async () => {
  server = startInProcessTestServer({ autoApprove: "acme", oauthRateLimit: false });
});
afterAll(() => server.close());

async function register(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("a registration that names no token_endpoint_auth_method (as the Python MCP SDK's default)", () => {
  it("gets a secret and is told to use client_secret_basic, which then works at /token", async () => {
    const { status, body } = await register({ client_name: "python default", redirect_uris: [CALLBACK_URL] });
    expect(status).toBe(201);
    expect(body.client_secret).toEqual(expect.any(String));
    expect(body.token_endpoint_auth_method).toBe("client_secret_basic");
    expect(body.client_secret_expires_at).toBe(0);

    const { verifier, challenge } = pkcePair();
    const callback = await followToCallback(
      authorizeUrl(server.url, {
        client_id: String(body.client_id),
        redirect_uri: CALLBACK_URL,
        code_challenge: challenge,
      }),
      CALLBACK_URL,
    );
    const basic = Buffer.from(`${body.client_id}:${body.client_secret}`).toString("base64");
    const token = await postForm(
      `${server.url}/token`,
      {
        grant_type: "authorization_code",
        code: callback.searchParams.get("code") ?? "",
        code_verifier: verifier,
        redirect_uri: CALLBACK_URL,
      },
      { authorization: `Basic ${basic}` },
    );
    expect(token.status).toBe(200);
  });
});

describe("the answer holds every registered field", () => {
  it("including application_type, with the defaults filled in", async () => {
    const metadata = {
      client_name: "Native app",
      redirect_uris: [CALLBACK_URL],
      application_type: "native",
      token_endpoint_auth_method: "none",
      scope: "chat:read",
      contacts: ["dev@example.com"],
      client_uri: "https://app.example.com",
      software_id: "app",
      software_version: "1.2.3",
    };
    const { status, body } = await register(metadata);
    expect(status).toBe(201);
    expect(body).toMatchObject({
      ...metadata,
      client_id: expect.any(String),
      client_id_issued_at: expect.any(Number),
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    expect(body.client_secret).toBeUndefined();
  });
});

describe("unsupported values are refused with invalid_client_metadata", () => {
  it.each([
    ["grant_types client_credentials", { grant_types: ["authorization_code", "client_credentials"] }],
    ["grant_types implicit", { grant_types: ["implicit"] }],
    ["response_types token", { response_types: ["token"] }],
    ["token_endpoint_auth_method private_key_jwt", { token_endpoint_auth_method: "private_key_jwt" }],
    ["application_type other", { application_type: "desktop" }],
    ["a client_name of 60 KB", { client_name: "n".repeat(60_000) }],
  ])("%s", async (_name, extra) => {
    const { status, body } = await register({ redirect_uris: [CALLBACK_URL], ...extra });
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_client_metadata");
  });
});

describe("unknown fields are dropped, and a registration is kept small", () => {
  it("a jwks and made-up fields are neither answered nor kept", async () => {
    const { status, body } = await register({
      redirect_uris: [CALLBACK_URL],
      token_endpoint_auth_method: "none",
      jwks: { keys: [{ kty: "oct", k: "x".repeat(8_000) }] },
      x_custom: "y".repeat(3_000),
    });
    expect(status).toBe(201);
    expect(body.jwks).toBeUndefined();
    expect(body.x_custom).toBeUndefined();
    expect(JSON.stringify(body).length).toBeLessThan(MAX_REGISTRATION_BYTES);
  });

  it("known fields adding up past the cap are refused", async () => {
    const uris = Array.from(
      { length: 10 },
      (_, i) => `http://127.0.0.1:${4000 + i}/callback/${"p".repeat(400)}`,
    );
    const { status, body } = await register({ redirect_uris: uris, client_name: "c".repeat(200) });
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_client_metadata");
  });
});
