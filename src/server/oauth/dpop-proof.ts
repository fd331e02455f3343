/** RFC 9449 §4.3 checks of one DPoP proof JWT: the JWS (signature, `typ`, `alg`, the embedded `jwk`) with `jose`, then `jti`, `htm`, `htu`, `iat`, `ath` and `nonce`. */
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, errors, type JWK, type JWTHeaderParameters, jwtVerify } from "jose";

/** The algorithms proofs may be signed with (what P-256, Ed25519 and RSA keys sign with; never symmetric or `none`). */
export const DPOP_ALGORITHMS = ["ES256", "EdDSA", "RS256", "PS256"] as const;
/** Longest proof read: an RSA-4096 key and signature fit well under it. */
const MAX_PROOF_CHARS = 8 * 1024;
const MAX_JTI_CHARS = 256;
/**
 * RSA keys a proof may carry: the usual exponent and 2048 to 4096 bits. Verifying costs grow with the exponent's
 * and the modulus' size (a 3072-bit exponent cost 8-10x the CPU per proof), and no client needs another.
 */
const RSA_PUBLIC_EXPONENT = 65537n;
const RSA_MODULUS_BITS = { min: 2048, max: 4096 } as const;

/** Why a proof is refused: `use_dpop_nonce` asks the client to retry with the server's nonce. */
export class DpopProofError extends Error {
  readonly error: "invalid_dpop_proof" | "use_dpop_nonce";
  readonly description: string;

  constructor(error: "invalid_dpop_proof" | "use_dpop_nonce", description: string) {
    super(`${error}: ${description}`);
    this.error = error;
    this.description = description;
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
  /** The nonce the proof carried, if any (checked against the server's when one was asked for). */
  nonce?: string;
}

const invalid = (description: string) => new DpopProofError("invalid_dpop_proof", description);

/** Checks the `DPoP` header's value (one proof) against the request; rejects with DpopProofError. */
export async function checkDpopProof(proof: string, expected: ProofExpectation): Promise<CheckedProof> {
  if (proof.length > MAX_PROOF_CHARS) throw invalid("the DPoP proof is too long");
  let verified: Awaited<ReturnType<typeof jwtVerify>>;
  try {
    verified = await jwtVerify(proof, embeddedPublicKey, {
      typ: "dpop+jwt",
      algorithms: [...DPOP_ALGORITHMS],
    });
  } catch (error) {
    throw error instanceof DpopProofError ? error : invalid(whyRefused(error));
  }
  const { payload, protectedHeader } = verified;
  const { jti, htm, htu, iat } = payload as Record<string, unknown>;
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
  const jkt = await calculateJwkThumbprint(protectedHeader.jwk as JWK, "sha256");
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
  return { jkt, jti, iat, ...(typeof payload.nonce === "string" ? { nonce: payload.nonce } : {}) };
}

/** `htu` compared as RFC 9449 §4.3 says: scheme and host case-folded, default ports dropped, no query or fragment. */
function normalisedUri(value: string): string | undefined {
  try {
    const url = new URL(value);
    return `${url.origin}${url.pathname}`;
  } catch {
    return undefined;
  }
}

/** What the client is told of a JWS jose refused, in the words of RFC 9449 §4.3. */
function whyRefused(error: unknown): string {
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return "the proof's signature does not verify with its jwk";
  if (error instanceof errors.JOSEAlgNotAllowed)
    return `the proof's alg must be one of ${DPOP_ALGORITHMS.join(", ")}`;
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === "typ")
    return 'the proof\'s typ must be "dpop+jwt"';
  if (error instanceof errors.JWTExpired || error instanceof errors.JWTClaimValidationFailed) {
    return `the proof's ${(error as errors.JWTClaimValidationFailed).claim} claim is not valid now`;
  }
  if (error instanceof errors.JOSEError && error.code === "ERR_JOSE_NOT_SUPPORTED")
    return "the proof's jwk is not a usable public key";
  return "the DPoP header is not one compact JWS with a JSON header and claims";
}

/**
 * Keys of recent proofs: a client signs every request with the same key, and importing a JWK costs about as much as
 * verifying a signature (jose's `EmbeddedJWK` imports it each time), so the key objects of the last 1024 are kept.
 */
const recentKeys = new Map<string, KeyObject>();
const MAX_RECENT_KEYS = 1024;

/** The proof's embedded `jwk` as a public key (RFC 9449 §4.2: a public key, never a private or symmetric one). */
function embeddedPublicKey(header: JWTHeaderParameters): KeyObject {
  const jwk = header.jwk as Record<string, unknown> | undefined;
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) throw invalid("the proof has no jwk");
  if ("d" in jwk || "p" in jwk || "k" in jwk) throw invalid("the proof's jwk is not a public key");
  const id = ["kty", "crv", "x", "y", "n", "e"].map((name) => String(jwk[name] ?? "")).join(".");
  const known = recentKeys.get(id);
  if (known) return known;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: "jwk" });
  } catch {
    throw invalid("the proof's jwk is not a usable public key");
  }
  const rsa = key.asymmetricKeyType === "rsa" ? key.asymmetricKeyDetails : undefined;
  if (rsa && rsa.publicExponent !== RSA_PUBLIC_EXPONENT)
    throw invalid(`the proof's RSA key must have the public exponent ${RSA_PUBLIC_EXPONENT}`);
  const bits = rsa?.modulusLength ?? RSA_MODULUS_BITS.min;
  if (bits < RSA_MODULUS_BITS.min || bits > RSA_MODULUS_BITS.max)
    throw invalid(`the proof's RSA key must be ${RSA_MODULUS_BITS.min} to ${RSA_MODULUS_BITS.max} bits`);
  if (recentKeys.size >= MAX_RECENT_KEYS) recentKeys.delete(recentKeys.keys().next().value as string);
  recentKeys.set(id, key);
  return key;
}
