/** Compact JWS for client assertions, the jwt-bearer grant and the reference IdP, on `jose`: decoding, verifying with the keys of a JWKS, signing. */
import { createPublicKey, type KeyObject, type JsonWebKey as NodeJwk } from "node:crypto";
import { compactVerify, decodeJwt as decodeClaims, decodeProtectedHeader, SignJWT } from "jose";

/** Algorithms taken and made: what RSA, P-256 and Ed25519 keys sign with. */
export const JWT_ALGORITHMS = ["RS256", "ES256", "EdDSA"] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];
/** Largest JWT read: an identity token with a few dozen claims and an RSA-4096 signature is well under 4 KiB. */
const MAX_JWT_CHARS = 16 * 1024;

/** A compact JWS with its header and claims read (not yet verified). */
export interface DecodedJwt {
  compact: string;
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

/** The header and claims of a compact JWS; undefined for anything else (too large, not three parts, not JSON objects). */
export function decodeJwt(jwt: string): DecodedJwt | undefined {
  if (jwt.length > MAX_JWT_CHARS || jwt.split(".").length !== 3) return undefined;
  try {
    return { compact: jwt, header: decodeProtectedHeader(jwt), payload: decodeClaims(jwt) };
  } catch {
    return undefined;
  }
}

/** The public keys of a JWKS; a private key, or a key of a type this server cannot check, is a configuration error. */
export function publicKeysOfJwks(jwks: { keys: JsonWebKey[] } | undefined, where: string): KeyObject[] {
  if (!Array.isArray(jwks?.keys) || jwks.keys.length === 0) throw new Error(`${where}: jwks has no keys`);
  return jwks.keys.map((jwk, index) => {
    if ("d" in jwk) throw new Error(`${where}: jwks.keys[${index}] is a private key; give the public half`);
    const key = createPublicKey({ key: jwk as NodeJwk, format: "jwk" });
    if (algorithmOf(key) === undefined)
      throw new Error(`${where}: jwks.keys[${index}] is not an RSA, P-256 or Ed25519 key`);
    return key;
  });
}

/** The JWS algorithm a key signs with here, or undefined for a key of another type. */
export function algorithmOf(key: KeyObject): JwtAlgorithm | undefined {
  if (key.asymmetricKeyType === "rsa") return "RS256";
  if (key.asymmetricKeyType === "ed25519") return "EdDSA";
  if (key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") return "ES256";
  return undefined;
}

/** True when one of `keys` verifies the signature with the algorithm that key signs with (the header's `alg`). */
export async function signedByOneOf(jwt: DecodedJwt, keys: readonly KeyObject[]): Promise<boolean> {
  for (const key of keys) {
    const alg = algorithmOf(key);
    if (alg === undefined || alg !== jwt.header.alg) continue;
    try {
      await compactVerify(jwt.compact, key, { algorithms: [alg] });
      return true;
    } catch {
      // Another key of the set may have signed it.
    }
  }
  return false;
}

/** Signs a JWT with a private key (RS256, ES256 or EdDSA from the key's type). */
export async function signJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  privateKey: KeyObject,
  kid?: string,
): Promise<string> {
  const alg = algorithmOf(privateKey);
  if (!alg) throw new Error("signJwt: the key is not an RSA, P-256 or Ed25519 key");
  return new SignJWT(payload)
    .setProtectedHeader({ ...header, alg, ...(kid ? { kid } : {}) })
    .sign(privateKey);
}

/** The `aud` claim as a list of strings (a single string or an array, RFC 7519 §4.1.3). */
export function audiencesOf(payload: Record<string, unknown>): string[] {
  const aud = payload.aud;
  if (typeof aud === "string") return [aud];
  return Array.isArray(aud) ? aud.filter((value): value is string => typeof value === "string") : [];
}
