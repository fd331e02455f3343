/** `private_key_jwt` client authentication (RFC 7523 §2.2, §3): a client's signed assertion checked against its registered JWKS, each used once. */
import { createPublicKey, type KeyObject } from "node:crypto";
import { algorithmOf, type DecodedJwt, decodeJwt, JWT_ALGORITHMS, signedByOneOf } from "./jwt.js";
import { OAuthError } from "./provider.js";

export const JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** Signing algorithms taken: what RSA, P-256 and Ed25519 keys sign with (the bridge picks the one of its key). */
export const CLIENT_ASSERTION_ALGORITHMS = JWT_ALGORITHMS;
/** Largest assertion read: a signed JWT with an RSA-4096 signature is well under 2 KiB. */
const MAX_ASSERTION_CHARS = 8 * 1024;
/** Clock difference allowed on `exp`, `nbf` and `iat`. */
const CLOCK_SKEW_SECONDS = 30;
/** Longest an assertion may live: it is remembered (for replay) until it expires, so this bounds the memory. */
const MAX_ASSERTION_LIFETIME_SECONDS = 3600;
/** Most assertions remembered at once; past it (after pruning the expired) new ones are refused. */
const MAX_REMEMBERED_ASSERTIONS = 10_000;

/** A registered client's JWKS (RFC 7591 `jwks`): public keys only. */
export interface ClientJwks {
  keys: JsonWebKey[];
}

/** The public keys of a JWKS, checked: a private key or one of an unsupported type is a configuration error. */
export function publicKeysOf(jwks: ClientJwks, clientId: string): KeyObject[] {
  if (!Array.isArray(jwks?.keys) || jwks.keys.length === 0) {
    throw new Error(`oauthClients: client "${clientId}" has a jwks without keys`);
  }
  return jwks.keys.map((jwk, index) => {
    if ("d" in jwk) throw new Error(`oauthClients: jwks.keys[${index}] of "${clientId}" is a private key`);
    const key = createPublicKey({ key: jwk as import("node:crypto").JsonWebKey, format: "jwk" });
    if (algorithmOf(key) === undefined) {
      throw new Error(
        `oauthClients: jwks.keys[${index}] of "${clientId}" is not an RSA, P-256 or Ed25519 key`,
      );
    }
    return key;
  });
}

/** The client an assertion names (`sub`), read before its signature is checked, so that its keys can be found. */
export function assertionSubject(assertion: string): string {
  return parseCompact(assertion).payload.sub;
}

export interface AssertionAudience {
  issuer: string;
  tokenEndpoint: string;
}

/** Checks assertions and remembers each `jti` until its `exp`, so that none is accepted twice. */
export class ClientAssertions {
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly audience: AssertionAudience,
    private readonly now: () => number,
  ) {}

  /** Throws `invalid_client` unless the assertion is signed by one of `keys` and its claims hold for `clientId`. */
  async check(assertion: string, clientId: string, keys: KeyObject[]): Promise<void> {
    const jwt = parseCompact(assertion);
    const { payload } = jwt;
    if (!(await signedByOneOf(jwt, keys))) {
      throw refused("the assertion's signature does not match a key registered for this client");
    }
    if (payload.iss !== clientId || payload.sub !== clientId)
      throw refused("iss and sub must be the client_id");
    const audiences = typeof payload.aud === "string" ? [payload.aud] : payload.aud;
    const accepted = [this.audience.issuer, `${this.audience.issuer}/`, this.audience.tokenEndpoint];
    if (!Array.isArray(audiences) || !audiences.some((aud) => accepted.includes(aud as string))) {
      throw refused(`aud must be the issuer ${this.audience.issuer} or the token endpoint`);
    }
    const nowSeconds = this.now() / 1000;
    if (typeof payload.exp !== "number" || payload.exp + CLOCK_SKEW_SECONDS <= nowSeconds) {
      throw refused("the assertion has expired (exp)");
    }
    if (payload.exp > nowSeconds + MAX_ASSERTION_LIFETIME_SECONDS) {
      throw refused(`exp is more than ${MAX_ASSERTION_LIFETIME_SECONDS} seconds away`);
    }
    if (typeof payload.nbf === "number" && payload.nbf > nowSeconds + CLOCK_SKEW_SECONDS) {
      throw refused("the assertion is not valid yet (nbf)");
    }
    if (typeof payload.jti !== "string" || payload.jti.length === 0 || payload.jti.length > 256) {
      throw refused("jti is required (a unique id of up to 256 characters)");
    }
    this.#remember(`${clientId}\n${payload.jti}`, (payload.exp + CLOCK_SKEW_SECONDS) * 1000);
  }

  #remember(key: string, until: number): void {
    const now = this.now();
    if (this.#seen.has(key) && (this.#seen.get(key) ?? 0) > now) {
      throw refused("this assertion (jti) was already used");
    }
    if (this.#seen.size >= MAX_REMEMBERED_ASSERTIONS) {
      for (const [seen, expiry] of this.#seen) if (expiry <= now) this.#seen.delete(seen);
      if (this.#seen.size >= MAX_REMEMBERED_ASSERTIONS)
        throw refused("too many assertions in flight; retry later");
    }
    this.#seen.set(key, until);
  }
}

type CompactJwt = DecodedJwt & {
  payload: { iss?: unknown; sub: string; aud?: unknown; exp?: unknown; nbf?: unknown; jti?: unknown };
};

/** The three parts of a compact JWS; anything else is `invalid_client`. */
function parseCompact(assertion: string): CompactJwt {
  if (assertion.length > MAX_ASSERTION_CHARS) throw refused("the assertion is too large");
  const jwt = decodeJwt(assertion);
  if (!jwt) throw refused("client_assertion is not a compact JWT");
  if (typeof jwt.payload.sub !== "string" || jwt.payload.sub.length === 0)
    throw refused("the assertion has no sub");
  return jwt as CompactJwt;
}

function refused(why: string): OAuthError {
  // 400, not 401: the client did not authenticate through the Authorization header (RFC 6749 §5.2).
  return new OAuthError("invalid_client", why, 400);
}
