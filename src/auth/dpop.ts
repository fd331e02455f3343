/** DPoP (RFC 9449) on the client side: one P-256 key per login, kept with it, and the SDK's `DpopSession` that signs proofs with it. */
import { createHash, webcrypto } from "node:crypto";
import type { DpopSession, OAuthClientProvider } from "@modelcontextprotocol/client";
import { rememberSecret } from "../internal/redact.js";
import type { StoredDpopKey, StoredLogin } from "./stored-login.js";

/** The one algorithm this client signs proofs with: what the servers we know of all take, and the SDK's default. */
const DPOP_ALGORITHM = "ES256";

/** True when authorization server metadata says DPoP-bound tokens can be had with an ES256 proof. */
export function offersDpop(metadata: unknown): boolean {
  const algorithms = (metadata as { dpop_signing_alg_values_supported?: unknown } | undefined)
    ?.dpop_signing_alg_values_supported;
  return Array.isArray(algorithms) && algorithms.includes(DPOP_ALGORITHM);
}

/** A new key for a login; the private half is written only to the login's store (keychain or 0600 file). */
async function newDpopKey(): Promise<StoredDpopKey> {
  // Imported when first needed, here and in sessionOf: in the bins' bundle the SDK's modules (hundreds of zod schemas)
  // then run only when a sign-in or a DPoP login needs them, not at every start (bench/HISTORY.md, round 11).
  const { generateDpopKeyPair } = await import("@modelcontextprotocol/client");
  // Extractable only so that the key can live with the login; it is never printed or sent.
  const pair = await generateDpopKeyPair({ alg: DPOP_ALGORITHM, extractable: true });
  const { x, y, d } = await webcrypto.subtle.exportKey("jwk", pair.privateKey);
  if (!x || !y || !d) throw new Error("The DPoP key could not be exported to be stored with the login.");
  const privateJwk = { kty: "EC", crv: "P-256", x, y, d } as const;
  return { alg: DPOP_ALGORITHM, privateJwk };
}

/**
 * The key a token request of this login signs its proof with: the login's own, else a new one, when the session
 * wants DPoP and the server offers it; undefined (Bearer tokens) otherwise.
 */
export async function dpopKeyForSignIn(
  options: { dpop?: boolean | undefined },
  metadata: unknown,
  login: Pick<StoredLogin, "dpopKey"> | undefined,
): Promise<StoredDpopKey | undefined> {
  if (!options.dpop || !offersDpop(metadata)) return undefined;
  return login?.dpopKey ?? (await newDpopKey());
}

/** The provider, signing a proof into each token request the SDK's `fetchToken` makes with it, when a key is given. */
export function withDpopProof<T extends OAuthClientProvider>(provider: T, key: StoredDpopKey | undefined): T {
  if (key) provider.dpop = () => dpopSessionOf(key);
  return provider;
}

const sessions = new Map<string, Promise<DpopSession>>();
/** Asked for on every upstream request: the record read from the store maps to its session without hashing. */
const sessionOfRecord = new WeakMap<StoredDpopKey, Promise<DpopSession>>();

/** The SDK's signing session over a stored key; one per key in this process, so its nonces carry over. */
export function dpopSessionOf(key: StoredDpopKey): Promise<DpopSession> {
  const known = sessionOfRecord.get(key);
  if (known) return known;
  const session = sessionByThumbprint(key);
  sessionOfRecord.set(key, session);
  session.catch(() => sessionOfRecord.delete(key));
  return session;
}

function sessionByThumbprint(key: StoredDpopKey): Promise<DpopSession> {
  const thumbprint = dpopThumbprint(key);
  let session = sessions.get(thumbprint);
  if (!session) {
    session = sessionOf(key, thumbprint);
    sessions.set(thumbprint, session);
    session.catch(() => sessions.delete(thumbprint));
  }
  return session;
}

/** RFC 7638 thumbprint of the key's public half: the `cnf.jkt` the server binds tokens to. */
export function dpopThumbprint(key: StoredDpopKey): string {
  const { crv, kty, x, y } = key.privateJwk;
  return createHash("sha256").update(JSON.stringify({ crv, kty, x, y })).digest("base64url");
}

async function sessionOf(key: StoredDpopKey, thumbprint: string): Promise<DpopSession> {
  rememberSecret(key.privateJwk.d);
  const { DpopSession } = await import("@modelcontextprotocol/client");
  const algorithm = { name: "ECDSA", namedCurve: "P-256" };
  const { crv, kty, x, y } = key.privateJwk;
  const publicJwk = { crv, kty, x, y };
  const [privateKey, publicKey] = await Promise.all([
    webcrypto.subtle.importKey("jwk", key.privateJwk, algorithm, false, ["sign"]),
    webcrypto.subtle.importKey("jwk", publicJwk, algorithm, true, ["verify"]),
  ]);
  return DpopSession.create({
    keyPair: { privateKey, publicKey, publicJwk, thumbprint, alg: DPOP_ALGORITHM },
  });
}

/** True when the stored tokens are DPoP-bound (the server answered `token_type: "DPoP"`) and the key is there. */
export function isDpopBound(login: Pick<StoredLogin, "dpopKey" | "tokens"> | undefined): boolean {
  return login?.tokens?.tokenType.toLowerCase() === "dpop" && login.dpopKey !== undefined;
}
