/** Compact JWS for the jwt-bearer grant and the reference IdP, on `node:crypto` alone (the server needs no JOSE package). */
import { createPublicKey, type KeyObject, type JsonWebKey as NodeJwk, sign, verify } from "node:crypto";

/** Algorithms taken and made: what RSA, P-256 and Ed25519 keys sign with. */
export const JWT_ALGORITHMS = ["RS256", "ES256", "EdDSA"] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];
/** Largest JWT read: an identity token with a few dozen claims and an RSA-4096 signature is well under 4 KiB. */
const MAX_JWT_CHARS = 16 * 1024;

export interface DecodedJwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signedPart: string;
  signature: Buffer;
}

/** The three parts of a compact JWS, parsed; undefined for anything else (too large, not base64url, not objects). */
export function decodeJwt(jwt: string): DecodedJwt | undefined {
  if (jwt.length > MAX_JWT_CHARS) return undefined;
  const parts = jwt.split(".");
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part))) return undefined;
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = jsonObject(headerPart);
  const payload = jsonObject(payloadPart);
  if (!header || !payload) return undefined;
  return {
    header,
    payload,
    signedPart: `${headerPart}.${payloadPart}`,
    signature: Buffer.from(signaturePart, "base64url"),
  };
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

/** True when one of `keys` (of the header's algorithm) verifies the signature. */
export function signedByOneOf(jwt: DecodedJwt, keys: readonly KeyObject[]): boolean {
  const data = Buffer.from(jwt.signedPart);
  return keys.some(
    (key) => algorithmOf(key) === jwt.header.alg && verifies(jwt.header.alg, data, key, jwt.signature),
  );
}

/** Signs a JWT with a private key (RS256, ES256 or EdDSA from the key's type). */
export function signJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  privateKey: KeyObject,
  kid?: string,
): string {
  const alg = algorithmOf(privateKey);
  if (!alg) throw new Error("signJwt: the key is not an RSA, P-256 or Ed25519 key");
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signedPart = `${encode({ ...header, alg, ...(kid ? { kid } : {}) })}.${encode(payload)}`;
  const data = Buffer.from(signedPart);
  const signature =
    alg === "ES256"
      ? sign("sha256", data, { key: privateKey, dsaEncoding: "ieee-p1363" })
      : sign(alg === "RS256" ? "sha256" : null, data, privateKey);
  return `${signedPart}.${signature.toString("base64url")}`;
}

/** The `aud` claim as a list of strings (a single string or an array, RFC 7519 §4.1.3). */
export function audiencesOf(payload: Record<string, unknown>): string[] {
  const aud = payload.aud;
  if (typeof aud === "string") return [aud];
  return Array.isArray(aud) ? aud.filter((value): value is string => typeof value === "string") : [];
}

function jsonObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {}
  return undefined;
}

function verifies(alg: unknown, data: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    if (alg === "RS256") return verify("sha256", data, key, signature);
    if (alg === "ES256") return verify("sha256", data, { key, dsaEncoding: "ieee-p1363" }, signature);
    if (alg === "EdDSA") return verify(null, data, key, signature);
  } catch {}
  return false;
}
