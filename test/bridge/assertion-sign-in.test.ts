/** Sign-in with an assertion and no person, against the reference server: a spawned bridge with `--workload-token-file` (the file rotated mid-run), an enterprise-managed sign-in through the reference IdP, chat-cli login, and the refusals, with no token or secret shown. */
import { generateKeyPairSync, type KeyObject, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { signJwt } from "../../src/server/oauth/jwt.js";
import { cleanEnv, runCli, runProcess } from "../cli/helpers.js";
import { scratchDir } from "../support/scratch-dir.js";
import { BRIDGE_BIN, connectThroughBridge } from "./fixtures/spawn-bridge.js";

const FAILING_BROWSER = resolve(import.meta.dirname, "../auth/fixtures/failing-browser.mjs");
const SEVEN_TOOLS = 7;
const CLUSTER = "https://cluster.example/oidc";
const CI = "https://ci.example/oidc";
const MCP_CLIENT_SECRET = "xaa-secret-5d1e9a7c3b";
const IDP_CLIENT_SECRET = "idp-secret-8c2f4a6e0d";
const clusterKey = generateKeyPairSync("ec", { namedCurve: "P-256" });
const ciKey = generateKeyPairSync("rsa", { modulusLength: 2048 });
const jwkOf = (key: KeyObject) => key.export({ format: "jwk" }) as JsonWebKey;
const now = () => Math.floor(Date.now() / 1000);

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({
    port: 0,
    oauthClients: [{ client_id: "wl-app" }, { client_id: "xaa-app", client_secret: MCP_CLIENT_SECRET }],
    trustedWorkloadIssuers: [
      { issuer: CLUSTER, jwks: { keys: [jwkOf(clusterKey.publicKey)] }, account: "acme" },
      { issuer: CI, jwks: { keys: [jwkOf(ciKey.publicKey)] }, account: "studio" },
    ],
    referenceIdp: {
      clientId: "idp-app",
      clientSecret: IDP_CLIENT_SECRET,
      account: "acme",
      mcpClientId: "xaa-app",
    },
  });
});
afterAll(() => server?.close());

/** A platform's token: the cluster's (account acme) unless told, for this server. */
function platformToken(claims: Record<string, unknown> = {}, key = clusterKey.privateKey): Promise<string> {
  return signJwt(
    { typ: "JWT", kid: randomUUID() },
    {
      iss: CLUSTER,
      sub: "system:serviceaccount:ci:deployer",
      aud: server.url,
      iat: now(),
      exp: now() + 600,
      ...claims,
    },
    key,
  );
}

/** A home of its own: config dir, a token file, and a browser that fails and notes it was asked. */
function newHome() {
  const dir = scratchDir("cmb-assertion-");
  const browserAsked = join(dir, "browser-asked.json");
  const tokenFile = join(dir, "token.jwt");
  const env = {
    CHAT_CONFIG_DIR: join(dir, "config"),
    BROWSER: `${process.execPath} ${FAILING_BROWSER}`,
    RECORD_ARGS_FILE: browserAsked,
  };
  const stored = () =>
    readdirSync(join(dir, "config", "auth"))
      .filter((name) => name.endsWith(".json"))
      .map((name) => readFileSync(join(dir, "config", "auth", name), "utf8"))
      .join("\n");
  return { env, tokenFile, browserOpened: () => existsSync(browserAsked), stored };
}

/** No JWT (a platform token, an ID token, an ID-JAG) and no secret in what is shown or stored. */
function expectNothingSecret(text: string, ...tokens: string[]) {
  for (const secret of [MCP_CLIENT_SECRET, IDP_CLIENT_SECRET, ...tokens]) expect(text).not.toContain(secret);
  expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
}

async function revoke(accessToken: string) {
  const response = await fetch(`${server.url}/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: accessToken, client_id: "wl-app" }).toString(),
  });
  expect(response.status).toBe(200);
}

describe("the bridge with --workload-token-file", () => {
  it("signs in with the platform's token, and the next token request reads the rotated file", async () => {
    const home = newHome();
    const first = await platformToken();
    writeFileSync(home.tokenFile, `${first}\n`, { mode: 0o600 });
    const args = [
      "--debug",
      "--token-store",
      "file",
      "--client-id",
      "wl-app",
      "--workload-token-file",
      home.tokenFile,
    ];
    const bridge = await connectThroughBridge([...args, server.mcpUrl], { env: home.env });
    let second = "";
    try {
      expect((await bridge.client.listTools()).tools).toHaveLength(SEVEN_TOOLS);
      const login = JSON.parse(home.stored());
      expect(login.tokens.account).toBe("acme");
      // The server offers DPoP: the grant's tokens are bound to the login's own key, like a person's.
      expect(login.tokens.tokenType).toMatch(/^dpop$/i);
      expect(login.dpopKey).toBeDefined();
      // The platform rotates the file (here to a token of another issuer, acting for another team), and the server
      // refuses the access token: the bridge's next token request must carry the new file's token.
      second = await platformToken({ iss: CI }, ciKey.privateKey);
      writeFileSync(home.tokenFile, second);
      await revoke(login.tokens.accessToken);
      const call = await bridge.client.callTool({ name: "list_chats", arguments: {} });
      expect(call.isError ?? false).toBe(false);
      expect(JSON.parse(home.stored()).tokens.account).toBe("studio");
    } finally {
      await bridge.close();
    }
    expect(home.browserOpened()).toBe(false);
    expectNothingSecret(bridge.stderr(), first, second);
    expectNothingSecret(home.stored(), first, second);
  });

  it.each([
    ["a wrong audience", () => platformToken({ aud: "https://elsewhere.example" }), "audience"],
    ["an expired token", () => platformToken({ iat: now() - 3600, exp: now() - 120 }), "expired"],
    ["an unknown issuer", () => platformToken({ iss: "https://stranger.example" }), "issuer"],
  ])("login refuses %s with invalid_grant and the reason, never the token", async (_, make, reason) => {
    const home = newHome();
    const token = await make();
    writeFileSync(home.tokenFile, token);
    const result = await runProcess(
      process.execPath,
      [
        BRIDGE_BIN,
        "login",
        "--debug",
        "--client-id",
        "wl-app",
        "--workload-token-file",
        home.tokenFile,
        server.mcpUrl,
      ],
      { env: cleanEnv(home.env) },
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("invalid_grant");
    expect(result.stderr).toContain(reason);
    expectNothingSecret(result.stderr + result.stdout, token);
    expect(home.browserOpened()).toBe(false);
  });

  it("refuses an empty token file when it is read, and a missing one before it starts", async () => {
    const home = newHome();
    writeFileSync(home.tokenFile, "\n");
    const empty = await runProcess(
      process.execPath,
      [BRIDGE_BIN, "login", "--client-id", "wl-app", "--workload-token-file", home.tokenFile, server.mcpUrl],
      { env: cleanEnv(home.env) },
    );
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain(`${home.tokenFile} is empty`);
    const missing = await runProcess(
      process.execPath,
      [
        BRIDGE_BIN,
        "login",
        "--client-id",
        "wl-app",
        "--workload-token-file",
        `${home.tokenFile}.gone`,
        server.mcpUrl,
      ],
      { env: cleanEnv(home.env) },
    );
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining("cannot be read (ENOENT)") });
    const noClient = await runProcess(
      process.execPath,
      [BRIDGE_BIN, "login", "--workload-token-file", home.tokenFile, server.mcpUrl],
      { env: cleanEnv(home.env) },
    );
    expect(noClient).toMatchObject({ code: 2, stderr: expect.stringContaining("--client-id") });
  });
});

describe("enterprise-managed sign-in through the reference IdP", () => {
  it("exchanges the ID token for an ID-JAG at the IdP and redeems it: seven tools, no consent page, nothing secret shown", async () => {
    const home = newHome();
    const issued = await fetch(`${server.url}/idp/id-token`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKeys.acme}` },
    });
    const idToken = ((await issued.json()) as { id_token: string }).id_token;
    writeFileSync(home.tokenFile, idToken, { mode: 0o600 });
    const args = ["--debug", "--token-store", "file", "--client-id", "xaa-app"];
    args.push(
      "--idp-issuer",
      `${server.url}/idp`,
      "--idp-client-id",
      "idp-app",
      "--idp-id-token-file",
      home.tokenFile,
    );
    const bridge = await connectThroughBridge([...args, server.mcpUrl], {
      env: {
        ...home.env,
        CHAT_MCP_CLIENT_SECRET: MCP_CLIENT_SECRET,
        CHAT_MCP_IDP_CLIENT_SECRET: IDP_CLIENT_SECRET,
      },
    });
    try {
      expect((await bridge.client.listTools()).tools).toHaveLength(SEVEN_TOOLS);
      expect(JSON.parse(home.stored()).tokens.account).toBe("acme");
    } finally {
      await bridge.close();
    }
    expect(home.browserOpened()).toBe(false);
    expectNothingSecret(bridge.stderr(), idToken);
    expectNothingSecret(home.stored(), idToken);
  });

  it("says which party refused: a wrong IdP secret names the identity provider, and shows no secret", async () => {
    const home = newHome();
    const issued = await fetch(`${server.url}/idp/id-token`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKeys.acme}` },
    });
    const idToken = ((await issued.json()) as { id_token: string }).id_token;
    writeFileSync(home.tokenFile, idToken);
    const result = await runProcess(
      process.execPath,
      [
        ...[BRIDGE_BIN, "login", "--debug", "--client-id", "xaa-app", "--idp-issuer", `${server.url}/idp`],
        ...["--idp-client-id", "idp-app", "--idp-id-token-file", home.tokenFile, server.mcpUrl],
      ],
      {
        env: cleanEnv({
          ...home.env,
          CHAT_MCP_CLIENT_SECRET: MCP_CLIENT_SECRET,
          CHAT_MCP_IDP_CLIENT_SECRET: "wrong-idp-secret-123",
        }),
      },
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("identity provider");
    expect(result.stderr).toContain("invalid_client");
    expectNothingSecret(result.stderr + result.stdout, idToken, "wrong-idp-secret-123");
  });
});

describe("chat-cli login --workload-token-file", () => {
  it("signs in as the client with the platform's token; whoami names the issuer's account", async () => {
    const home = newHome();
    const token = await platformToken({ iss: CI }, ciKey.privateKey);
    writeFileSync(home.tokenFile, token);
    const env = cleanEnv(home.env);
    const login = await runCli(
      [
        ...["--base-url", server.url, "--debug", "login", "--client-id", "wl-app"],
        ...["--workload-token-file", home.tokenFile, "--token-store", "file"],
      ],
      { env },
    );
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("as client wl-app");
    expect((await runCli(["--base-url", server.url, "whoami"], { env })).stdout).toContain("studio");
    expect(home.browserOpened()).toBe(false);
    expectNothingSecret(login.stderr + login.stdout, token);
  });
});
