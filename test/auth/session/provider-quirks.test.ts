/** What some identity providers need of a sign-in (mcp-remote's flags): extra authorization parameters, no RFC 8707 `resource`, registration metadata of the person's choosing. */
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { BRIDGE_BIN } from "../../bridge/fixtures/spawn-bridge.js";
import { cleanUpSessions, setup } from "./helpers.js";

const run = promisify(execFile);

afterEach(cleanUpSessions);

describe("authorizeParams (--authorize-param)", () => {
  it("adds the parameters to the authorization request, a provider's own defaults replaced, the protocol's kept", async () => {
    const t = await setup({ scopesSupported: ["mcp:read"], offerOfflineAccess: true });
    const session = t.session({
      authorizeParams: { audience: "https://api.example.com", prompt: "login", idp_hint: "okta" },
    });
    const token = await session.recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    const [authorization] = t.tiny.authorizations;
    expect(authorization?.params).toMatchObject({
      audience: "https://api.example.com",
      // The SDK asks prompt=consent along with offline_access; the person's choice replaces it, once.
      prompt: "login",
      idp_hint: "okta",
      response_type: "code",
      code_challenge_method: "S256",
      resource: t.tiny.resourceUrl,
    });
    expect(authorization?.params.state).toMatch(/^[\w-]{43}$/);
  });

  it("refuses a protocol parameter when the session is made, before any request", async () => {
    const t = await setup();
    for (const key of ["state", "redirect_uri", "client_id", "Resource", "code_challenge", "scope"]) {
      expect(() => t.session({ authorizeParams: { [key]: "x" } })).toThrow(/cannot be overridden/);
    }
    expect(t.tiny.registrations).toBe(0);
  });
});

describe("disableResourceParameter (--disable-resource-parameter)", () => {
  it("leaves `resource` out of the authorization, token and refresh requests", async () => {
    const t = await setup();
    const token = await t.session({ disableResourceParameter: true }).recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    await t.expireStoredToken();
    const refreshed = await t.session({ disableResourceParameter: true }).accessToken();
    expect(refreshed).not.toBe(token);
    expect(t.tiny.authorizations[0]?.params).not.toHaveProperty("resource");
    expect(t.tiny.tokenRequests).toEqual([
      { grantType: "authorization_code" },
      { grantType: "refresh_token" },
    ]);
  });

  it("without it, every request names the resource", async () => {
    const t = await setup();
    await t.session().recover(await t.challenge());
    await t.expireStoredToken();
    await t.session().accessToken();
    expect(t.tiny.authorizations[0]?.resource).toBe(t.tiny.resourceUrl);
    expect(t.tiny.tokenRequests.map((request) => request.resource)).toEqual([
      t.tiny.resourceUrl,
      t.tiny.resourceUrl,
    ]);
  });
});

describe("clientMetadata (--static-oauth-client-metadata)", () => {
  it("is merged over the registration's metadata; the redirect, grants and auth method stay the bridge's", async () => {
    const t = await setup({ scopesSupported: ["mcp:read"] });
    const token = await t
      .session({
        clientName: "chat-mcp-bridge",
        clientMetadata: {
          client_name: "Acme's bridge",
          logo_uri: "https://acme.example/logo.png",
          scope: "mcp:read openid",
          contacts: ["it@acme.example"],
        },
      })
      .recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
    expect(t.tiny.registrationRequests).toEqual([
      {
        client_name: "Acme's bridge",
        logo_uri: "https://acme.example/logo.png",
        scope: "mcp:read openid",
        contacts: ["it@acme.example"],
        application_type: "native",
        redirect_uris: [t.tiny.authorizations[0]?.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
    ]);
  });

  it("refuses metadata that would change a field the sign-in depends on; the same value is no change", async () => {
    const t = await setup();
    expect(() => t.session({ clientMetadata: { redirect_uris: ["https://evil.example/cb"] } })).toThrow(
      /"redirect_uris" is set by the bridge/,
    );
    expect(() =>
      t.session({ clientMetadata: { token_endpoint_auth_method: "client_secret_basic" } }),
    ).toThrow(/"token_endpoint_auth_method" is set by the bridge to "none"/);
    expect(() => t.session({ clientMetadata: { grant_types: ["implicit"] } })).toThrow(/"grant_types"/);
    const token = await t
      .session({ clientMetadata: { response_types: ["code"], token_endpoint_auth_method: "none" } })
      .recover(await t.challenge());
    expect(await t.resourceStatus(token)).toBe(200);
  });
});

describe("the bridge's flags reach the sign-in", () => {
  it("chat-mcp-bridge login --authorize-param --disable-resource-parameter --static-oauth-client-metadata", async () => {
    const t = await setup();
    await run(
      process.execPath,
      [
        BRIDGE_BIN,
        "login",
        "--token-store",
        "file",
        "--authorize-param",
        "audience=https://api.example.com",
        "--disable-resource-parameter",
        "--static-oauth-client-metadata",
        '{"client_name":"Acme bridge"}',
        t.tiny.resourceUrl,
      ],
      { env: { ...t.env, CHAT_CONFIG_DIR: t.configDir } },
    );
    expect(t.tiny.registrationRequests[0]).toMatchObject({ client_name: "Acme bridge" });
    expect(t.tiny.authorizations[0]?.params.audience).toBe("https://api.example.com");
    expect(t.tiny.authorizations[0]?.params).not.toHaveProperty("resource");
    expect(t.tiny.tokenRequests).toEqual([{ grantType: "authorization_code" }]);
  });
});

describe("the callback's path, the page after success and the ID token reach the sign-in", () => {
  it("chat-mcp-bridge login --callback-path --auth-success-url --use-id-token", async () => {
    const t = await setup({ idTokenTtlSeconds: 600 });
    const landings: string[] = [];
    const successPage = createServer((request, response) => {
      landings.push(request.url ?? "");
      response.end("welcome");
    });
    await new Promise<void>((resolve) => successPage.listen(0, "127.0.0.1", resolve));
    const successUrl = `http://127.0.0.1:${(successPage.address() as AddressInfo).port}/signed-in`;
    try {
      await run(
        process.execPath,
        [
          BRIDGE_BIN,
          "login",
          ...["--token-store", "file", "--callback-path", "/oauth/callback"],
          ...["--auth-success-url", successUrl, "--use-id-token"],
          t.tiny.resourceUrl,
        ],
        { env: { ...t.env, CHAT_CONFIG_DIR: t.configDir } },
      );
    } finally {
      successPage.close();
    }
    expect(new URL(t.tiny.authorizations[0]?.redirectUri ?? "").pathname).toBe("/oauth/callback");
    expect(t.tiny.registrationRequests[0]?.redirect_uris).toEqual([t.tiny.authorizations[0]?.redirectUri]);
    expect(landings).toEqual(["/signed-in"]);
    expect(t.storedLogin().tokens?.accessToken).toBe(t.tiny.idTokens[0]);
  });
});
