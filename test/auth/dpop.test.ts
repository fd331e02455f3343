/** The login's DPoP key: made only when wanted and offered, stored in a shape read back strictly, and signing proofs whose `jwk` is its public half. */
import { describe, expect, it } from "vitest";
import {
  dpopKeyForSignIn,
  dpopSessionOf,
  dpopThumbprint,
  isDpopBound,
  offersDpop,
} from "../../src/auth/dpop.js";
import { parseStoredLogin } from "../../src/auth/stored-login.js";

const OFFERING = { dpop_signing_alg_values_supported: ["ES256", "RS256"] };
const login = (extra: Record<string, unknown>) =>
  JSON.stringify({
    version: 1,
    serverUrl: "https://chat.example.com/mcp",
    authorizationServerUrl: "https://chat.example.com",
    savedAt: 1,
    tokens: { accessToken: "at", tokenType: "DPoP", issuedAt: 1 },
    ...extra,
  });

describe("when a login gets a DPoP key", () => {
  it("only when the session wants DPoP and the server offers ES256", async () => {
    expect(offersDpop(OFFERING)).toBe(true);
    expect(offersDpop({ dpop_signing_alg_values_supported: ["PS256"] })).toBe(false);
    expect(offersDpop(undefined)).toBe(false);
    expect(await dpopKeyForSignIn({ dpop: false }, OFFERING, undefined)).toBeUndefined();
    expect(await dpopKeyForSignIn({ dpop: true }, {}, undefined)).toBeUndefined();
    const key = await dpopKeyForSignIn({ dpop: true }, OFFERING, undefined);
    expect(key?.privateJwk).toMatchObject({ kty: "EC", crv: "P-256" });
    // A login that has a key keeps it across sign-ins.
    expect(await dpopKeyForSignIn({ dpop: true }, OFFERING, { dpopKey: key })).toBe(key);
  });
});

describe("the stored key", () => {
  it("is read back with the login, and a proof carries its public half only", async () => {
    const key = (await dpopKeyForSignIn({ dpop: true }, OFFERING, undefined))!;
    const stored = parseStoredLogin(login({ dpopKey: key }));
    expect(stored?.dpopKey).toEqual(key);
    expect(isDpopBound(stored)).toBe(true);
    const session = await dpopSessionOf(stored!.dpopKey!);
    expect(session.thumbprint).toBe(dpopThumbprint(key));
    const proof = await session.buildProof({ htm: "GET", htu: "https://chat.example.com/mcp?x=1" });
    const header = JSON.parse(Buffer.from(proof.split(".")[0]!, "base64url").toString("utf8"));
    expect(header).toMatchObject({ typ: "dpop+jwt", alg: "ES256" });
    expect(header.jwk.d).toBeUndefined();
  });

  it("makes a login unreadable when it is not a P-256 private key (the login is then signed in again)", () => {
    expect(
      parseStoredLogin(login({ dpopKey: { alg: "ES256", privateJwk: { kty: "RSA" } } })),
    ).toBeUndefined();
    expect(parseStoredLogin(login({ dpopKey: { alg: "none", privateJwk: {} } }))).toBeUndefined();
  });

  it("leaves Bearer tokens unbound even with a key", () => {
    const stored = parseStoredLogin(login({ tokens: { accessToken: "at", issuedAt: 1 } }));
    expect(isDpopBound(stored)).toBe(false);
  });
});
