/** DPoP end to end: a spawned bridge signs in to the reference server that requires DPoP, in both eras, and a token copied out of the store is useless without the login's key. */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DpopSession } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { dpopSessionOf } from "../../src/auth/dpop.js";
import { parseStoredLogin, type StoredLogin } from "../../src/auth/stored-login.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import { connectThroughBridge } from "./fixtures/spawn-bridge.js";

const browserScript = resolve(import.meta.dirname, "../auth/fixtures/http-browser.mjs");
const ACCESS_TOKEN_TTL_SECONDS = 2;

function newHome() {
  const dir = scratchDir("cmb-dpop-");
  const browserLog = join(dir, "browser.log");
  writeFileSync(browserLog, "");
  return {
    env: {
      CHAT_CONFIG_DIR: join(dir, "config"),
      BROWSER: `${process.execPath} ${browserScript}`,
      HTTP_BROWSER_LOG: browserLog,
    },
    login: (): StoredLogin => {
      const authDir = join(dir, "config", "auth");
      const name = readdirSync(authDir).find((file) => file.endsWith(".json"))!;
      return parseStoredLogin(readFileSync(join(authDir, name), "utf8"))!;
    },
  };
}

const servers: Record<string, ReferenceServer> = {};
/**
 * The servers' OAuth clock, held at this instant while set: a test that uses a stored 2 s token by hand holds the
 * clock where the token is fresh, so a loaded machine cannot expire it between two requests.
 */
let heldAt: number | undefined;
beforeAll(async () => {
  const common = {
    port: 0,
    autoApprove: "acme",
    dpop: "required",
    accessTokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
    oauthNow: () => heldAt ?? Date.now(),
  } as const;
  // Nonces on the resource too (the default): the bridge must answer use_dpop_nonce on /mcp without signing in again.
  servers.modern = await startReferenceServer({ ...common, mcpEra: "modern" });
  servers.legacy = await startReferenceServer({ ...common, mcpEra: "legacy", dpopNonces: "everywhere" });
});
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

/** A `ping` to /mcp with these credentials, as anyone holding them could send it. */
function ping(server: ReferenceServer, headers: Record<string, string>) {
  return fetch(server.mcpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
}

describe.each(["modern", "legacy"] as const)(
  "the bridge against a server that requires DPoP (%s era)",
  (era) => {
    const home = newHome();

    it("signs in with DPoP-bound tokens, keeps the key with the login, and calls tools across a refresh", async () => {
      const server = servers[era]!;
      const bridge = await connectThroughBridge(
        ["--debug", "--token-store", "file", "--auth-timeout", "20", server.mcpUrl],
        {
          env: home.env,
        },
      );
      try {
        expect((await bridge.client.listTools()).tools).toHaveLength(7);
        const login = home.login();
        expect(login.tokens?.tokenType).toBe("DPoP");
        expect(login.dpopKey?.privateJwk.d).toBeTruthy();
        // Past the token's lifetime: the refresh is proven with the same key, and calls go on.
        await new Promise((done) => setTimeout(done, ACCESS_TOKEN_TTL_SECONDS * 1000 + 200));
        const listed = await bridge.client.callTool({ name: "list_chats", arguments: {} });
        expect(listed.isError, JSON.stringify(listed.content)).toBeFalsy();
        expect(home.login().tokens?.accessToken).not.toBe(login.tokens?.accessToken);
        expect(home.login().dpopKey).toEqual(login.dpopKey);
      } finally {
        await bridge.close();
      }
      expect(bridge.stderr()).not.toContain(home.login().dpopKey!.privateJwk.d);
      // --debug names requests, never a proof (a JWT) or the key.
      expect(bridge.stderr()).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ|dpop\+jwt/);
    });

    it("a token copied out of the store is refused as Bearer and with another key; a replayed proof is refused", async () => {
      const server = servers[era]!;
      const login = home.login();
      const token = login.tokens!.accessToken;
      // The token as the server saw it when it was issued: fresh for every request below, however slow the machine.
      heldAt = login.tokens!.issuedAt;
      onTestFinished(() => {
        heldAt = undefined;
      });
      const asBearer = await ping(server, { authorization: `Bearer ${token}` });
      expect(asBearer.status).toBe(401);

      const thief = await DpopSession.create();
      const thiefProof = () => thief.buildProof({ htm: "POST", htu: server.mcpUrl, accessToken: token });
      let stolen = await ping(server, { authorization: `DPoP ${token}`, dpop: await thiefProof() });
      thief.observeNonce(stolen, server.mcpUrl);
      if (stolen.headers.get("dpop-nonce"))
        stolen = await ping(server, { authorization: `DPoP ${token}`, dpop: await thiefProof() });
      expect(stolen.status).toBe(401);
      expect(stolen.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_dpop_proof"/);

      // The holder of the key: a fresh proof passes once, the same proof again does not.
      const owner = await dpopSessionOf(login.dpopKey!);
      const ownerProof = () => owner.buildProof({ htm: "POST", htu: server.mcpUrl, accessToken: token });
      let proof = await ownerProof();
      let first = await ping(server, { authorization: `DPoP ${token}`, dpop: proof });
      if (first.status === 401 && first.headers.get("dpop-nonce")) {
        owner.observeNonce(first, server.mcpUrl);
        proof = await ownerProof();
        first = await ping(server, { authorization: `DPoP ${token}`, dpop: proof });
      }
      expect(first.status).not.toBe(401);
      const replayed = await ping(server, { authorization: `DPoP ${token}`, dpop: proof });
      expect(replayed.status).toBe(401);
      expect(await replayed.text()).toContain("already used");
    });

    it("started again with the stored login, answers the resource's nonce request (nonces are on by default) and calls tools", async () => {
      const server = servers[era]!;
      const before = home.login();
      const bridge = await connectThroughBridge(
        ["--debug", "--token-store", "file", "--no-browser", "--auth-timeout", "20", server.mcpUrl],
        { env: home.env },
      );
      try {
        const listed = await bridge.client.callTool({ name: "list_chats", arguments: {} });
        expect(listed.isError, JSON.stringify(listed.content)).toBeFalsy();
        expect(home.login().dpopKey).toEqual(before.dpopKey);
      } finally {
        await bridge.close();
      }
      expect(bridge.stderr()).not.toMatch(/device|sign in at/i);
    });
  },
);
