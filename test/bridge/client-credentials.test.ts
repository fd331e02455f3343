/** Sign-in with no person: a spawned bridge and chat-cli with `--client-credentials` (a secret, or a private key) against the reference server, no browser opened and no secret shown. */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { cleanEnv, runCli, runProcess } from "../cli/helpers.js";
import { scratchDir } from "../support/scratch-dir.js";
import { BRIDGE_BIN, connectThroughBridge } from "./fixtures/spawn-bridge.js";

const FAILING_BROWSER = resolve(import.meta.dirname, "../auth/fixtures/failing-browser.mjs");
const SECRET = "cc-secret-7f3a9d2e5b1c";
const SEVEN_TOOLS = 7;

const keys = {
  ES256: generateKeyPairSync("ec", { namedCurve: "P-256" }),
  RS256: generateKeyPairSync("rsa", { modulusLength: 2048 }),
  EdDSA: generateKeyPairSync("ed25519"),
};
const pemOf = (key: KeyObject) => key.export({ format: "pem", type: "pkcs8" }).toString();

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({
    port: 0,
    oauthClients: [
      { client_id: "ci-secret", client_secret: SECRET, client_credentials_account: "acme" },
      ...Object.entries(keys).map(([alg, pair]) => ({
        client_id: `ci-${alg}`,
        jwks: { keys: [pair.publicKey.export({ format: "jwk" }) as JsonWebKey] },
        client_credentials_account: "studio",
      })),
    ],
  });
});
afterAll(() => server?.close());

/** A home of its own: config dir, a key file (0600 unless told), and a browser that fails and notes it was asked. */
function newHome(options: { alg?: keyof typeof keys; keyMode?: number } = {}) {
  const dir = scratchDir("cmb-client-credentials-");
  const browserAsked = join(dir, "browser-asked.json");
  const keyFile = join(dir, "client-key.pem");
  const pem = pemOf(keys[options.alg ?? "ES256"].privateKey);
  writeFileSync(keyFile, pem, { mode: 0o600 });
  chmodSync(keyFile, options.keyMode ?? 0o600);
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
  return { env, keyFile, pem, browserOpened: () => existsSync(browserAsked), stored };
}

/** What must never be shown: the secret, the key (any line of its PEM body) and an assertion. */
function expectNothingSecret(text: string, pem?: string) {
  expect(text).not.toContain(SECRET);
  expect(text).not.toMatch(/client_assertion=|eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
  for (const line of (pem ?? "").split("\n").filter((line) => line.length > 20))
    expect(text).not.toContain(line);
}

describe("the bridge with --client-credentials", () => {
  it("signs in with the client's secret, lists the seven tools, and opens no browser", async () => {
    const home = newHome();
    const args = ["--debug", "--token-store", "file", "--client-credentials", "--client-id", "ci-secret"];
    const bridge = await connectThroughBridge([...args, server.mcpUrl], {
      env: { ...home.env, CHAT_MCP_CLIENT_SECRET: SECRET },
    });
    try {
      const { tools } = await bridge.client.listTools();
      expect(tools).toHaveLength(SEVEN_TOOLS);
      // A refused token (revoked by the server) is replaced by a new grant, still with no person.
      const accessToken = JSON.parse(home.stored()).tokens.accessToken as string;
      const revoked = await fetch(`${server.url}/revoke`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`ci-secret:${SECRET}`).toString("base64")}`,
        },
        body: new URLSearchParams({ token: accessToken }).toString(),
      });
      expect(revoked.status).toBe(200);
      expect(await bridge.client.callTool({ name: "list_chats", arguments: {} })).not.toMatchObject({
        isError: true,
      });
      expect(JSON.parse(home.stored()).tokens.accessToken).not.toBe(accessToken);
    } finally {
      await bridge.close();
    }
    expect(home.browserOpened()).toBe(false);
    expectNothingSecret(bridge.stderr());
    expect(home.stored()).not.toContain(SECRET);
  });

  it.each(Object.keys(keys) as (keyof typeof keys)[])(
    "signs in with a %s private key (private_key_jwt), lists the seven tools, and shows no key",
    async (alg) => {
      const home = newHome({ alg });
      const args = ["--debug", "--token-store", "file", "--client-credentials", "--client-id", `ci-${alg}`];
      const bridge = await connectThroughBridge(
        [...args, "--client-private-key", home.keyFile, server.mcpUrl],
        { env: home.env },
      );
      try {
        expect((await bridge.client.listTools()).tools).toHaveLength(SEVEN_TOOLS);
      } finally {
        await bridge.close();
      }
      expect(home.browserOpened()).toBe(false);
      expectNothingSecret(bridge.stderr(), home.pem);
      expectNothingSecret(home.stored(), home.pem);
    },
  );

  it("refuses a key file others can read, naming the file and the fix, not the key", async () => {
    const home = newHome({ keyMode: 0o644 });
    const result = await runProcess(
      process.execPath,
      [
        BRIDGE_BIN,
        "login",
        "--client-credentials",
        "--client-id",
        "ci-ES256",
        "--client-private-key",
        home.keyFile,
        server.mcpUrl,
      ],
      { env: cleanEnv(home.env) },
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(home.keyFile);
    expect(result.stderr).toContain("chmod 600");
    expectNothingSecret(result.stderr, home.pem);
  });

  it("refuses --client-credentials without a client id or without a credential", async () => {
    const home = newHome();
    const noId = await runProcess(
      process.execPath,
      [BRIDGE_BIN, "login", "--client-credentials", server.mcpUrl],
      {
        env: cleanEnv(home.env),
      },
    );
    expect(noId).toMatchObject({ code: 2, stderr: expect.stringContaining("--client-id") });
    const noSecret = await runProcess(
      process.execPath,
      [BRIDGE_BIN, "login", "--client-credentials", "--client-id", "ci-secret", server.mcpUrl],
      { env: cleanEnv(home.env) },
    );
    expect(noSecret).toMatchObject({ code: 2, stderr: expect.stringContaining("CHAT_MCP_CLIENT_SECRET") });
  });
});

describe("chat-cli login --client-credentials", () => {
  it("signs in with the secret, then list works with the stored token; --debug shows no secret", async () => {
    const home = newHome();
    const env = cleanEnv({ ...home.env, CHAT_MCP_CLIENT_SECRET: SECRET });
    const base = ["--base-url", server.url, "--debug"];
    const login = await runCli(
      [...base, "login", "--client-credentials", "--client-id", "ci-secret", "--token-store", "file"],
      { env },
    );
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("as client ci-secret");
    const list = await runCli([...base, "--json", "list"], { env: { ...env, CHAT_MCP_CLIENT_SECRET: "" } });
    expect(list.code, list.stderr).toBe(0);
    expect(home.browserOpened()).toBe(false);
    expectNothingSecret(login.stderr + login.stdout + list.stderr);
  });

  it("signs in with a private key", async () => {
    const home = newHome({ alg: "RS256" });
    const env = cleanEnv(home.env);
    const login = await runCli(
      [
        "--base-url",
        server.url,
        "--debug",
        "login",
        "--client-credentials",
        "--client-id",
        "ci-RS256",
        "--client-private-key",
        home.keyFile,
        "--token-store",
        "file",
      ],
      { env },
    );
    expect(login.code, login.stderr).toBe(0);
    expect((await runCli(["--base-url", server.url, "whoami"], { env })).stdout).toContain("studio");
    expectNothingSecret(login.stderr + login.stdout, home.pem);
  });
});
