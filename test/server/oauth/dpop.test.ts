/** DPoP (RFC 9449) on the reference server: bound tokens from the token endpoint, proofs checked on `/v2` and `/mcp`, nonces and replay, through its fetch handler. */
import { generateKeyPairSync, randomUUID, sign } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DpopSession } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, it } from "vitest";
import { createInProcessReferenceServer } from "../../../src/server/in-process.js";
import { checkDpopProof } from "../../../src/server/oauth/dpop.js";
import type { ReferenceServerOptions } from "../../../src/server/options.js";

const BASE = "http://127.0.0.1:8787";
const CLIENT = { client_id: "ci", client_secret: "s3cret-value", client_credentials_account: "acme" };
const basic = { authorization: `Basic ${Buffer.from("ci:s3cret-value").toString("base64")}` };

function serverWith(options: ReferenceServerOptions = {}) {
  const server = createInProcessReferenceServer({ rateLimit: false, oauthClients: [CLIENT], ...options });
  afterAll(() => server.close());
  return server;
}

type Server = ReturnType<typeof serverWith>;

async function tokenRequest(server: Server, proof?: string, resource = `${BASE}/v2`) {
  const response = await server.fetch(`${BASE}/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...basic,
      ...(proof ? { dpop: proof } : {}),
    },
    body: new URLSearchParams({ grant_type: "client_credentials", resource }).toString(),
  });
  return { response, body: (await response.json()) as Record<string, string> };
}

/** A DPoP-bound token, after the nonce round trip the token endpoint asks for. */
async function boundToken(server: Server, session: DpopSession, resource = `${BASE}/v2`): Promise<string> {
  const proof = () => session.buildProof({ htm: "POST", htu: `${BASE}/token` });
  const first = await tokenRequest(server, await proof(), resource);
  session.observeNonce(first.response, `${BASE}/token`);
  if (first.response.status === 200) return first.body.access_token!;
  const second = await tokenRequest(server, await proof(), resource);
  expect(second.body.token_type).toBe("DPoP");
  return second.body.access_token!;
}

function getChats(server: Server, headers: Record<string, string>) {
  return server.fetch(`${BASE}/v2/chats?limit=1`, { headers });
}

async function proofFor(session: DpopSession, token: string, method = "GET", url = `${BASE}/v2/chats`) {
  return session.buildProof({ htm: method, htu: url, accessToken: token });
}

describe("metadata", () => {
  const allowed = serverWith();
  const off = serverWith({ dpop: "off" });
  it("advertises dpop_signing_alg_values_supported unless DPoP is off", async () => {
    const read = async (server: Server) =>
      (await (await server.fetch(`${BASE}/.well-known/oauth-authorization-server`)).json()) as Record<
        string,
        unknown
      >;
    expect((await read(allowed)).dpop_signing_alg_values_supported).toContain("ES256");
    expect((await read(off)).dpop_signing_alg_values_supported).toBeUndefined();
    const resource = async (server: Server) =>
      (await (await server.fetch(`${BASE}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
        string,
        unknown
      >;
    expect(await resource(allowed)).toMatchObject({
      dpop_signing_alg_values_supported: expect.arrayContaining(["ES256"]),
      dpop_bound_access_tokens_required: false,
    });
    expect((await resource(off)).dpop_bound_access_tokens_required).toBeUndefined();
  });
});

describe("token endpoint", () => {
  const server = serverWith();
  it("asks for its nonce first (use_dpop_nonce with DPoP-Nonce), then issues a DPoP token", async () => {
    const session = await DpopSession.create();
    const first = await tokenRequest(server, await session.buildProof({ htm: "POST", htu: `${BASE}/token` }));
    expect(first.response.status).toBe(400);
    expect(first.body.error).toBe("use_dpop_nonce");
    expect(first.response.headers.get("dpop-nonce")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    session.observeNonce(first.response, `${BASE}/token`);
    const second = await tokenRequest(
      server,
      await session.buildProof({ htm: "POST", htu: `${BASE}/token` }),
    );
    expect(second.response.status).toBe(200);
    expect(second.body.token_type).toBe("DPoP");
  });

  it("refuses a proof for another URL (invalid_dpop_proof)", async () => {
    const session = await DpopSession.create();
    await boundToken(server, session);
    const wrong = await tokenRequest(server, await session.buildProof({ htm: "POST", htu: `${BASE}/other` }));
    expect(wrong.response.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_dpop_proof");
  });

  it("issues Bearer tokens without a proof when DPoP is allowed", async () => {
    expect((await tokenRequest(server)).body.token_type).toBe("Bearer");
  });
});

describe("a DPoP-bound token on /v2 and /mcp", () => {
  const server = serverWith();

  it("works with the DPoP scheme and a fresh proof by its key", async () => {
    const session = await DpopSession.create();
    const token = await boundToken(server, session);
    const answer = await getChats(server, {
      authorization: `DPoP ${token}`,
      dpop: await proofFor(session, token),
    });
    expect(answer.status).toBe(200);
  });

  it("is refused as Bearer, with another key's proof, with a replayed proof, and with a proof for another token", async () => {
    const session = await DpopSession.create();
    const thief = await DpopSession.create();
    const token = await boundToken(server, session);
    const other = await boundToken(server, session);

    const asBearer = await getChats(server, { authorization: `Bearer ${token}` });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_token"/);

    const stolen = await getChats(server, {
      authorization: `DPoP ${token}`,
      dpop: await proofFor(thief, token),
    });
    expect(stolen.status).toBe(401);
    expect(stolen.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_dpop_proof"/);

    const proof = await proofFor(session, token);
    expect((await getChats(server, { authorization: `DPoP ${token}`, dpop: proof })).status).toBe(200);
    const replayed = await getChats(server, { authorization: `DPoP ${token}`, dpop: proof });
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({
      error: { message: expect.stringContaining("already used") },
    });

    const forOther = await getChats(server, {
      authorization: `DPoP ${token}`,
      dpop: await proofFor(session, other),
    });
    expect(forOther.status).toBe(401);
    const wrongMethod = await getChats(server, {
      authorization: `DPoP ${token}`,
      dpop: await proofFor(session, token, "POST"),
    });
    expect(wrongMethod.status).toBe(401);
    const noProof = await getChats(server, { authorization: `DPoP ${token}` });
    expect(noProof.status).toBe(401);
  });

  it("is checked on /mcp too", async () => {
    const session = await DpopSession.create();
    const token = await boundToken(server, session, `${BASE}/mcp`);
    const discover = (headers: Record<string, string>) =>
      server.fetch(`${BASE}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    const proven = await discover({
      authorization: `DPoP ${token}`,
      dpop: await proofFor(session, token, "POST", `${BASE}/mcp`),
    });
    expect(proven.status).not.toBe(401);
    const asBearer = await discover({ authorization: `Bearer ${token}` });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_token"/);
  });
});

describe("dpop: required", () => {
  const server = serverWith({ dpop: "required", dpopNonces: "everywhere" });
  it("refuses a token request without a proof", async () => {
    const plain = await tokenRequest(server);
    expect(plain.response.status).toBe(400);
    expect(plain.body.error).toBe("invalid_dpop_proof");
  });

  it("asks for a nonce on the resource too (dpopNonces: everywhere), then accepts the retried proof", async () => {
    const session = await DpopSession.create();
    const token = await boundToken(server, session);
    // The resource shares the token endpoint's origin, hence its nonce: a stale one must be asked to be replaced.
    session.rememberNonce(BASE, "stale-nonce");
    const first = await getChats(server, {
      authorization: `DPoP ${token}`,
      dpop: await proofFor(session, token),
    });
    expect(first.status).toBe(401);
    expect(first.headers.get("www-authenticate")).toMatch(/^DPoP error="use_dpop_nonce"/);
    session.observeNonce(first, `${BASE}/v2/chats`);
    const second = await getChats(server, {
      authorization: `DPoP ${token}`,
      dpop: await proofFor(session, token),
    });
    expect(second.status).toBe(200);
  });
});

/** The flush attack, scaled down by the ledger's limits (the rule is the same at the default ones). */
describe("the replay ledger (a proof is good for one request, whatever the load)", () => {
  const limits = { perKey: 20 };
  const victimGets = (server: Server, token: string, proof: string) =>
    getChats(server, { authorization: `DPoP ${token}`, dpop: proof });

  it("is not flushed by refused requests: a token for /mcp sent to /v2 with fresh proofs past the cap", async () => {
    const server = serverWith({ dpopNonces: "token-endpoint", dpopReplayLimits: limits });
    const victim = await DpopSession.create();
    const victimToken = await boundToken(server, victim);
    const proof = await proofFor(victim, victimToken);
    expect((await victimGets(server, victimToken, proof)).status).toBe(200);

    const attacker = await DpopSession.create();
    const wrongResource = await boundToken(server, attacker, `${BASE}/mcp`);
    for (let i = 0; i < limits.perKey * 2 + 10; i++) {
      const refused = await getChats(server, {
        authorization: `DPoP ${wrongResource}`,
        dpop: await proofFor(attacker, wrongResource),
      });
      expect(refused.status).toBe(401);
    }
    const replayed = await victimGets(server, victimToken, proof);
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({
      error: { message: expect.stringContaining("already used") },
    });
    // The refused requests took no room: the victim's fresh proofs are still taken.
    expect((await victimGets(server, victimToken, await proofFor(victim, victimToken))).status).toBe(200);
  });

  for (const dpopNonces of ["token-endpoint", "everywhere"] as const) {
    it(`one key's flood costs that key alone (nonces: ${dpopNonces}): 429 for it, others untouched, none forgotten`, async () => {
      const server = serverWith({ dpopNonces, dpopReplayLimits: limits });
      const nonced = async (session: DpopSession, token: string) => {
        let answer = await victimGets(server, token, await proofFor(session, token));
        if (answer.status === 401 && /use_dpop_nonce/.test(answer.headers.get("www-authenticate") ?? "")) {
          session.observeNonce(answer, `${BASE}/v2/chats`);
          answer = await victimGets(server, token, await proofFor(session, token));
        }
        return answer;
      };
      const victim = await DpopSession.create();
      const victimToken = await boundToken(server, victim);
      expect((await nonced(victim, victimToken)).status).toBe(200);
      const proof = await proofFor(victim, victimToken);
      expect((await victimGets(server, victimToken, proof)).status).toBe(200);

      const flooders: Array<[DpopSession, string]> = [];
      for (let i = 0; i < 3; i++) {
        const flooder = await DpopSession.create();
        flooders.push([flooder, await boundToken(server, flooder)]);
      }
      for (const [flooder, token] of flooders) {
        const statuses: number[] = [];
        for (let i = 0; i < limits.perKey + 2; i++) {
          const answer = await nonced(flooder, token);
          statuses.push(answer.status);
          if (answer.status === 429) expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
        }
        // The key's token request took one place of its share; then its own requests wait.
        expect(statuses).toEqual([...Array(limits.perKey - 1).fill(200), 429, 429, 429]);
      }
      // The victim's next proof is taken at once: no nonce was retired for it, no 429.
      const next = await victimGets(server, victimToken, await proofFor(victim, victimToken));
      expect(next.status).toBe(200);
      const replayed = await victimGets(server, victimToken, proof);
      expect(replayed.status).toBe(401);
      expect(await replayed.json()).toMatchObject({
        error: { message: expect.stringContaining("already used") },
      });
    });
  }

  it("refuses a replayed proof on /mcp, and a token request's proof is used only when tokens are issued", async () => {
    const server = serverWith({ dpopReplayLimits: limits });
    const session = await DpopSession.create();
    const token = await boundToken(server, session, `${BASE}/mcp`);
    const ping = (proof: string) =>
      server.fetch(`${BASE}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `DPoP ${token}`,
          dpop: proof,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    const proof = await proofFor(session, token, "POST", `${BASE}/mcp`);
    expect((await ping(proof)).status).not.toBe(401);
    const replayed = await ping(proof);
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({ error: "invalid_dpop_proof" });

    // A token request refused (unknown grant) leaves its proof unused: the same proof then gets tokens, once.
    const tokenProof = await session.buildProof({ htm: "POST", htu: `${BASE}/token` });
    const refused = await server.fetch(`${BASE}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...basic, dpop: tokenProof },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "unknown" }).toString(),
    });
    expect(refused.status).toBe(400);
    expect((await tokenRequest(server, tokenProof)).response.status).toBe(200);
    expect((await tokenRequest(server, tokenProof)).body.error).toBe("invalid_dpop_proof");
  });
});

describe("a restart (dataFile): a proof used before it is not taken again", () => {
  it("asks for a nonce of the new process for proofs that could predate it, then takes fresh ones", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cmb-dpop-restart-"));
    try {
      const options: ReferenceServerOptions = {
        rateLimit: false,
        oauthClients: [CLIENT],
        dpopNonces: "off",
        dataFile: join(dir, "store.json"),
      };
      const first = createInProcessReferenceServer(options);
      const session = await DpopSession.create();
      const token = await boundToken(first, session);
      const proof = await proofFor(session, token);
      expect((await getChats(first, { authorization: `DPoP ${token}`, dpop: proof })).status).toBe(200);
      await first.close();

      const restarted = createInProcessReferenceServer(options);
      try {
        const replayed = await getChats(restarted, { authorization: `DPoP ${token}`, dpop: proof });
        expect(replayed.status).toBe(401);
        expect(replayed.headers.get("www-authenticate")).toMatch(/^DPoP error="use_dpop_nonce"/);
        session.observeNonce(replayed, `${BASE}/v2/chats`);
        const fresh = await getChats(restarted, {
          authorization: `DPoP ${token}`,
          dpop: await proofFor(session, token),
        });
        expect(fresh.status).toBe(200);
      } finally {
        await restarted.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the per-credential rate limit comes before the proof's verification", () => {
  const rateLimit = { capacity: 2, refillPerSecond: 0.001 };

  it("on /v2: requests with bad proofs spend the credential's budget, so a flood of them costs no verification", async () => {
    const server = serverWith({ rateLimit, dpopNonces: "off" });
    const session = await DpopSession.create();
    const token = await boundToken(server, session);
    const other = await DpopSession.create();
    for (let i = 0; i < 2; i++) {
      const forged = await getChats(server, {
        authorization: `DPoP ${token}`,
        dpop: await proofFor(other, token),
      });
      expect(forged.status).toBe(401);
    }
    const limited = await getChats(server, {
      authorization: `DPoP ${token}`,
      dpop: await proofFor(session, token),
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("on /mcp too, per credential", async () => {
    const server = serverWith({ rateLimit, dpopNonces: "off" });
    const ping = async (session: DpopSession, token: string) =>
      server.fetch(`${BASE}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
          authorization: `DPoP ${token}`,
          dpop: await proofFor(session, token, "POST", `${BASE}/mcp`),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
    const session = await DpopSession.create();
    const token = await boundToken(server, session, `${BASE}/mcp`);
    expect((await ping(session, token)).status).not.toBe(429);
    expect((await ping(session, token)).status).not.toBe(429);
    const limited = await ping(session, token);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another credential has its own budget.
    const otherSession = await DpopSession.create();
    const otherToken = await boundToken(server, otherSession, `${BASE}/mcp`);
    expect((await ping(otherSession, otherToken)).status).not.toBe(429);
  });
});

describe("RSA keys in proofs are bounded (an odd exponent or modulus costs many times the CPU per proof)", () => {
  async function rsaProof(modulusLength: number, publicExponent: number): Promise<string> {
    // Signed by hand: jose refuses to sign with a key under 2048 bits.
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength, publicExponent });
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const header = { alg: "RS256", typ: "dpop+jwt", jwk: publicKey.export({ format: "jwk" }) };
    const claims = {
      jti: randomUUID(),
      htm: "GET",
      htu: `${BASE}/v2/chats`,
      iat: Math.floor(Date.now() / 1000),
    };
    const input = `${part(header)}.${part(claims)}`;
    return `${input}.${sign("sha256", Buffer.from(input), privateKey).toString("base64url")}`;
  }
  const expectation = () => ({
    method: "GET",
    url: `${BASE}/v2/chats`,
    nowSeconds: Date.now() / 1000,
  });

  it("takes 2048 to 4096 bits with exponent 65537; refuses another exponent and a small modulus", async () => {
    await expect(checkDpopProof(await rsaProof(2048, 65537), expectation())).resolves.toMatchObject({
      jti: expect.any(String),
    });
    await expect(checkDpopProof(await rsaProof(2048, 3), expectation())).rejects.toMatchObject({
      error: "invalid_dpop_proof",
      description: expect.stringContaining("65537"),
    });
    await expect(checkDpopProof(await rsaProof(1024, 65537), expectation())).rejects.toMatchObject({
      error: "invalid_dpop_proof",
      description: expect.stringContaining("2048"),
    });
  });
});
