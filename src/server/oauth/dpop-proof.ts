/** RFC 9449 §4.3 checks of one DPoP proof JWT (signature, `typ`, `jwk`, `htm`, `htu`, `iat`, `ath`, `nonce`) with node:crypto only. */
import { constants, createHash, createPublicKey, type JsonWebKey, type KeyObject, verify } from "node:crypto";

/** The algorithms proofs may be signed with (what P-256, Ed25519 and RSA keys sign with; never symmetric or `none`). */
export const DPOP_ALGORITHMS = ["ES256", "EdDSA", "RS256", "PS256"] as const;
type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];
/** Longest proof read: an RSA-4096 key and signature fit well under it. */
const MAX_PROOF_CHARS = 8 * 1024;
const MAX_JTI_CHARS = 256;

/** Why a proof is refused: `use_dpop_nonce` asks the client to retry with the server's nonce. */
export class DpopProofError extends Error {
  constructor(
    readonly error: "invalid_dpop_proof" | "use_dpop_nonce",
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
  }
}

/** What the request the proof came with must match. */
export interface ProofExpectation {
  method: string;
  /** The request's URL; compared without query and fragment. */
  url: string;
  /** Present when the proof accompanies an access token: the proof's `ath` must be its hash. */
  accessToken?: string;
  /** Seconds since the epoch. */
  nowSeconds: number;
  /** How far in the past `iat` may be, and how far in the future. */
  maxAgeSeconds: number;
  maxFutureSeconds: number;
  /** When given, the proof must be signed by the key of this thumbprint (the token's `cnf.jkt`). */
  boundTo?: string;
  /** When given, the proof must carry one of these nonces. */
  acceptedNonces?: readonly string[];
}

/** A proof that passed: its key's thumbprint (`cnf.jkt`) and its `jti`, for the replay cache. */
export interface CheckedProof {
  jkt: string;
  jti: string;
  iat: number;
  /** The server nonce the proof carried, when one was asked for. */
  nonce?: string;
}

const invalid = (description: string) => new DpopProofError("invalid_dpop_proof", description);

/** Checks the `DPoP` header's value (one proof) against the request; throws DpopProofError. */
export function checkDpopProof(proof: string, expected: ProofExpectation): CheckedProof {
  if (proof.length > MAX_PROOF_CHARS) throw invalid("the DPoP proof is too long");
  const parts = proof.split(".");
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]+$/.test(part))) {
    throw invalid("the DPoP header is not one compact JWS");
  }
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  const header = jsonObject(encodedHeader, "header");
  const payload = jsonObject(encodedPayload, "payload");
  if (header.typ !== "dpop+jwt") throw invalid('the proof\'s typ must be "dpop+jwt"');
  const alg = header.alg;
  if (typeof alg !== "string" || !(DPOP_ALGORITHMS as readonly string[]).includes(alg)) {
    throw invalid(`the proof's alg must be one of ${DPOP_ALGORITHMS.join(", ")}`);
  }
  const jwk = header.jwk;
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) throw invalid("the proof has no jwk");
  const publicJwk = jwk as Record<string, unknown>;
  if ("d" in publicJwk || "p" in publicJwk || "k" in publicJwk)
    throw invalid("the proof's jwk is not a public key");
  const key = publicKeyOf(publicJwk);
  if (!signedBy(key, alg as DpopAlgorithm, `${encodedHeader}.${encodedPayload}`, encodedSignature)) {
    throw invalid("the proof's signature does not verify with its jwk");
  }
  const { jti, htm, htu, iat } = payload;
  if (typeof jti !== "string" || jti.length === 0 || jti.length > MAX_JTI_CHARS)
    throw invalid("the proof needs a jti");
  if (htm !== expected.method.toUpperCase()) throw invalid("the proof's htm is not the request's method");
  if (typeof htu !== "string" || normalisedUri(htu) !== normalisedUri(expected.url)) {
    throw invalid("the proof's htu is not the request's URL");
  }
  if (typeof iat !== "number" || !Number.isFinite(iat)) throw invalid("the proof needs a numeric iat");
  if (
    iat < expected.nowSeconds - expected.maxAgeSeconds ||
    iat > expected.nowSeconds + expected.maxFutureSeconds
  ) {
    throw invalid("the proof's iat is outside the accepted window");
  }
  if (expected.accessToken !== undefined) {
    const ath = createHash("sha256").update(expected.accessToken, "ascii").digest("base64url");
    if (payload.ath !== ath) throw invalid("the proof's ath is not the hash of the access token");
  }
  const jkt = jwkThumbprint(publicJwk);
  // Another key than the token's is refused as such, before any nonce round trip.
  if (expected.boundTo !== undefined && jkt !== expected.boundTo) {
    throw invalid("the proof is signed by another key than the token is bound to");
  }
  if (expected.acceptedNonces) {
    const nonce = payload.nonce;
    if (typeof nonce !== "string" || !expected.acceptedNonces.includes(nonce)) {
      throw new DpopProofError("use_dpop_nonce", "Use the DPoP-Nonce the server sent in the proof");
    }
    return { jkt, jti, iat, nonce };
  }
  return { jkt, jti, iat };
}

/** RFC 7638 SHA-256 thumbprint of a public JWK: its required members, sorted, without whitespace. */
export function jwkThumbprint(jwk: Record<string, unknown>): string {
  const members: Record<string, readonly string[]> = {
    EC: ["crv", "kty", "x", "y"],
    OKP: ["crv", "kty", "x"],
    RSA: ["e", "kty", "n"],
  };
  const names = members[String(jwk.kty)];
  if (!names) throw invalid("the proof's jwk has an unsupported kty");
  const required: Record<string, unknown> = {};
  for (const name of names) {
    if (typeof jwk[name] !== "string") throw invalid(`the proof's jwk lacks ${name}`);
    required[name] = jwk[name];
  }
  return createHash("sha256").update(JSON.stringify(required)).digest("base64url");
}

/** `htu` compared as RFC 9449 §4.3 says: scheme and host case-folded, default ports dropped, no query or fragment. */
export function normalisedUri(value: string): string | undefined {
  try {
    const url = new URL(value);
    return `${url.origin}${url.pathname}`;
  } catch {
    return undefined;
  }
}

function jsonObject(encoded: string, part: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(Buffer.from(encoded, "base64url").toString("utf8"));
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw invalid(`the proof's ${part} is not a JSON object`);
}

/** Keys of recent proofs: a client signs every request with the same key, and importing a JWK costs more than verifying. */
const recentKeys = new Map<string, KeyObject>();
const MAX_RECENT_KEYS = 1024;

function publicKeyOf(jwk: Record<string, unknown>): KeyObject {
  const id = ["kty", "crv", "x", "y", "n", "e"].map((name) => String(jwk[name] ?? "")).join(".");
  const known = recentKeys.get(id);
  if (known) return known;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: "jwk" });
  } catch {
    throw invalid("the proof's jwk is not a usable public key");
  }
  if (recentKeys.size >= MAX_RECENT_KEYS) recentKeys.delete(recentKeys.keys().next().value as string);
  recentKeys.set(id, key);
  return key;
}

function signedBy(key: KeyObject, alg: DpopAlgorithm, signingInput: string, signature: string): boolean {
  const data = Buffer.from(signingInput, "ascii");
  const bytes = Buffer.from(signature, "base64url");
  const type = key.asymmetricKeyType;
  try {
    switch (alg) {
      case "ES256":
        return (
          type === "ec" &&
          key.asymmetricKeyDetails?.namedCurve === "prime256v1" &&
          verify("sha256", data, { key, dsaEncoding: "ieee-p1363" }, bytes)
        );
      case "EdDSA":
        return type === "ed25519" && verify(null, data, key, bytes);
      case "RS256":
        return type === "rsa" && verify("sha256", data, key, bytes);
      case "PS256":
        return (
          type === "rsa" &&
          verify("sha256", data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }, bytes)
        );
    }
  } catch {
    return false;
  }
}
