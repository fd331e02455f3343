/** `chat-cli serve --oauth-config <file>`: the file's clients and trusted issuers, checked, and the server built from them offering the jwt-bearer grant. */
import { generateKeyPairSync } from "node:crypto";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readServeOAuthConfig } from "../../../src/cli/commands/serve.js";
import { UsageError } from "../../../src/internal/usage-error.js";
import { createInProcessReferenceServer } from "../../../src/server/index.js";
import { scratchDir } from "../../support/scratch-dir.js";

const dir = scratchDir("cmb-serve-oauth-config-");
const publicJwk = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" });

function configFile(content: unknown, mode = 0o600): string {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  chmodSync(file, mode);
  return file;
}

const config = {
  oauthClients: [{ client_id: "wl-app" }],
  trustedWorkloadIssuers: [
    { issuer: "https://cluster.example", jwks: { keys: [publicJwk] }, account: "acme" },
  ],
  referenceIdp: { clientId: "idp-app", account: "acme" },
};

describe("--oauth-config", () => {
  it("reads the clients and issuers, and a server built from them offers the jwt-bearer grant and the IdP", async () => {
    const options = readServeOAuthConfig(configFile(config));
    expect(options).toEqual(config);
    const server = createInProcessReferenceServer(options);
    const metadata = await (
      await server.fetch(`${server.url}/.well-known/oauth-authorization-server`)
    ).json();
    expect(metadata.grant_types_supported).toContain("urn:ietf:params:oauth:grant-type:jwt-bearer");
    expect((await server.fetch(`${server.url}/.well-known/oauth-authorization-server/idp`)).status).toBe(200);
    await server.close();
  });

  it.each([
    ["a file others can read", () => configFile(config, 0o644), "chmod 600"],
    ["a misspelt field", () => configFile({ trustedWorkloadIssuer: [] }), "trustedWorkloadIssuer"],
    [
      "an issuer without keys",
      () => configFile({ trustedWorkloadIssuers: [{ issuer: "x", account: "acme" }] }),
      "jwks",
    ],
    ["not JSON", () => configFile("{"), "not valid JSON"],
  ])("refuses %s", (_, make, message) => {
    const file = make();
    expect(() => readServeOAuthConfig(file)).toThrow(UsageError);
    expect(() => readServeOAuthConfig(file)).toThrow(message);
  });

  // zod's own sentences ("Too small: expected string to have >=1 characters") never reach the terminal.
  it.each([
    [{ oauthClients: [{ client_id: "" }] }, '--oauth-config: "oauthClients.0.client_id" must not be empty'],
    [{ oauthClients: [{}] }, '--oauth-config: "oauthClients.0.client_id" is missing'],
    [{ oauthClients: "wl-app" }, '--oauth-config: "oauthClients" must be an array'],
    [
      { referenceIdp: { clientId: "a", account: "b", extra: 1 } },
      '"referenceIdp" has a field it does not know: "extra"',
    ],
    [[], "--oauth-config: the file must be an object"],
  ])("names the field of %j in a sentence of its own", (content, message) => {
    const file = configFile(content);
    expect(() => readServeOAuthConfig(file)).toThrow(message);
    try {
      readServeOAuthConfig(file);
    } catch (error) {
      expect((error as Error).message).not.toMatch(/expected|received|Too small|Invalid input|Unrecognized/);
    }
  });
});
