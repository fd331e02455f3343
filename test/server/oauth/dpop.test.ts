/** DPoP (RFC 9449) on the reference server: bound tokens from the token endpoint, proofs checked on `/v2` and `/mcp`, nonces and replay, through its fetch handler. */
import { DpopSession } from "@modelcontextprotocol/client";
import { afterAll, describe, expect, it } from "vitest";
import { createInProcessReferenceServer } from "../../../src/server/in-process.js";
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
  const limits = { perKey: 20, total: 40 };
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
    for (let i = 0; i < limits.total + 10; i++) {
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

  it("without resource nonces, refuses (429) a key past its share and the server when full, never forgets", async () => {
    const server = serverWith({ dpopNonces: "token-endpoint", dpopReplayLimits: limits });
    const victim = await DpopSession.create();
    const victimToken = await boundToken(server, victim);
    const proof = await proofFor(victim, victimToken);
    expect((await victimGets(server, victimToken, proof)).status).toBe(200);

    const flooders: Array<[DpopSession, string]> = [];
    for (let i = 0; i < 3; i++) {
      const flooder = await DpopSession.create();
      flooders.push([flooder, await boundToken(server, flooder)]);
    }
    // Remembered so far: the victim's token request and call, each flooder's token request (one of its key's share).
    const remembered = 2 + flooders.length;
    const statuses: number[] = [];
    for (const [flooder, token] of flooders) {
      for (let i = 0; i < limits.perKey + 2; i++) {
        const answer = await getChats(server, {
          authorization: `DPoP ${token}`,
          dpop: await proofFor(flooder, token),
        });
        statuses.push(answer.status);
        if (answer.status === 429) expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    }
    // Each key gets its share, then 429; the third key meets the full server sooner.
    expect(statuses.filter((status) => status === 200)).toHaveLength(limits.total - remembered);
    expect(statuses.slice(0, limits.perKey)).toEqual([...Array(limits.perKey - 1).fill(200), 429]);
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    const replayed = await victimGets(server, victimToken, proof);
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({
      error: { message: expect.stringContaining("already used") },
    });
  });

  it("with resource nonces (the default), retires the nonces when full and asks for the new one; the old proof stays refused", async () => {
    const server = serverWith({ dpopReplayLimits: limits });
    const victim = await DpopSession.create();
    const victimToken = await boundToken(server, victim);
    const proof = await proofFor(victim, victimToken);
    expect((await victimGets(server, victimToken, proof)).status).toBe(200);

    const flooder = await DpopSession.create();
    const token = await boundToken(server, flooder);
    let askedForNonce = 0;
    for (let i = 0; i < limits.total * 3; i++) {
      let answer = await getChats(server, {
        authorization: `DPoP ${token}`,
        dpop: await proofFor(flooder, token),
      });
      if (answer.status === 401) {
        expect(answer.headers.get("www-authenticate")).toMatch(/^DPoP error="use_dpop_nonce"/);
        askedForNonce++;
        flooder.observeNonce(answer, `${BASE}/v2/chats`);
        answer = await getChats(server, {
          authorization: `DPoP ${token}`,
          dpop: await proofFor(flooder, token),
        });
      }
      expect(answer.status).toBe(200);
    }
    expect(askedForNonce).toBeGreaterThan(0);
    expect((await victimGets(server, victimToken, proof)).status).toBe(401);
    // The victim's client is asked for the new nonce once, and goes on.
    const fresh = await victimGets(server, victimToken, await proofFor(victim, victimToken));
    expect(fresh.headers.get("www-authenticate")).toMatch(/^DPoP error="use_dpop_nonce"/);
    victim.observeNonce(fresh, `${BASE}/v2/chats`);
    expect((await victimGets(server, victimToken, await proofFor(victim, victimToken))).status).toBe(200);
  });

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
