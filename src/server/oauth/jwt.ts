/** JWTs at the authorization server, on `jose`: `private_key_jwt` client assertions, the jwt-bearer grant (workload tokens, ID-JAGs), signing for the reference IdP. */
import { createPublicKey, type KeyObject, type JsonWebKey as NodeJwk } from "node:crypto";
import { compactVerify, decodeJwt as decodeClaims, decodeProtectedHeader, SignJWT } from "jose";
import type { AssertionGrantOptions } from "../options.js";
import {
  type Approval,
  type AuthorizationFlows,
  OAuthError,
  type OAuthGrants,
  type TokenResponseBody,
  tokenResponse,
} from "./grants.js";
import type { RegisteredClient } from "./registration.js";

/** Algorithms taken and made: what RSA, P-256 and Ed25519 keys sign with (the bridge picks the one of its key). */
export const JWT_ALGORITHMS = ["RS256", "ES256", "EdDSA"] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];
export const JWT_BEARER_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export const JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** The `typ` of an identity assertion authorization grant (SEP-990). */
export const ID_JAG_TYPE = "oauth-id-jag+jwt";
/** Largest JWT read: an identity token with a few dozen claims and an RSA-4096 signature is well under 4 KiB. */
const MAX_JWT_CHARS = 16 * 1024;
/** Largest client assertion read: a signed JWT with an RSA-4096 signature is well under 2 KiB. */
const MAX_ASSERTION_CHARS = 8 * 1024;
/** Clock difference allowed on `exp`, `nbf` and `iat`. */
const CLOCK_SKEW_SECONDS = 30;
/** Longest a client assertion may live: it is remembered (for replay) until it expires, so this bounds the memory. */
const MAX_ASSERTION_LIFETIME_SECONDS = 3600;
/** Most `jti`s remembered at once (each until its `exp`); past it, after pruning the expired, new ones are refused. */
const MAX_REMEMBERED_JTIS = 10_000;

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
function algorithmOf(key: KeyObject): JwtAlgorithm | undefined {
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

/** `exp` (required), `nbf` and `iat` against the clock, give or take the skew; throws `refused(why)`. */
function checkTimes(
  payload: Record<string, unknown>,
  nowSeconds: number,
  refused: (why: string) => OAuthError,
): number {
  if (typeof payload.exp !== "number" || payload.exp + CLOCK_SKEW_SECONDS <= nowSeconds) {
    throw refused("the assertion has expired (exp)");
  }
  if (typeof payload.nbf === "number" && payload.nbf > nowSeconds + CLOCK_SKEW_SECONDS) {
    throw refused("the assertion is not valid yet (nbf)");
  }
  if (typeof payload.iat === "number" && payload.iat > nowSeconds + CLOCK_SKEW_SECONDS) {
    throw refused("the assertion was issued in the future (iat)");
  }
  return payload.exp;
}

/** JWTs taken once: each `jti` (under its issuer) is kept until its `exp`, bounded in number. */
class UsedJtis {
  readonly #until = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** Remembers the JWT; throws `refused` when it was used before or too many are in flight. */
  use(
    key: string,
    exp: number,
    refused: (why: string) => OAuthError,
    why: { used: string; full: string },
  ): void {
    const now = this.now();
    if ((this.#until.get(key) ?? 0) > now) throw refused(why.used);
    if (this.#until.size >= MAX_REMEMBERED_JTIS) {
      for (const [seen, until] of this.#until) if (until <= now) this.#until.delete(seen);
      if (this.#until.size >= MAX_REMEMBERED_JTIS) throw refused(why.full);
    }
    this.#until.set(key, (exp + CLOCK_SKEW_SECONDS) * 1000);
  }
}

/** A `jti` of at most 256 characters, or `refused`. */
function jtiOf(payload: Record<string, unknown>, refused: (why: string) => OAuthError, why: string): string {
  const { jti } = payload;
  if (typeof jti !== "string" || jti.length === 0 || jti.length > 256) throw refused(why);
  return jti;
}

/** 400, not 401: the client did not authenticate through the Authorization header (RFC 6749 §5.2). */
const invalidClient = (why: string) => new OAuthError("invalid_client", why, 400);
const invalidGrant = (why: string) => new OAuthError("invalid_grant", why);

/** The client an assertion names (`sub`), read before its signature is checked, so that its keys can be found. */
export function assertionSubject(assertion: string): string {
  return parseAssertion(assertion).payload.sub as string;
}

function parseAssertion(assertion: string): DecodedJwt {
  if (assertion.length > MAX_ASSERTION_CHARS) throw invalidClient("the assertion is too large");
  const jwt = decodeJwt(assertion);
  if (!jwt) throw invalidClient("client_assertion is not a compact JWT");
  if (typeof jwt.payload.sub !== "string" || jwt.payload.sub.length === 0)
    throw invalidClient("the assertion has no sub");
  return jwt;
}

/** `private_key_jwt` (RFC 7523 §2.2, §3): a client's signed assertion checked against its registered JWKS, each used once. */
export class ClientAssertions {
  readonly #used: UsedJtis;

  constructor(
    /** This server's issuer; the token endpoint is `<issuer>/token`. */
    private readonly issuer: string,
    private readonly now: () => number,
  ) {
    this.#used = new UsedJtis(now);
  }

  /** Throws `invalid_client` unless the assertion is signed by one of the client's keys and its claims hold for it. */
  async check(assertion: string, client: RegisteredClient): Promise<void> {
    const clientId = client.client_id;
    const jwt = parseAssertion(assertion);
    const { payload } = jwt;
    const keys = publicKeysOfJwks(client.jwks, `oauthClients: client "${clientId}"`);
    if (!(await signedByOneOf(jwt, keys))) {
      throw invalidClient("the assertion's signature does not match a key registered for this client");
    }
    if (payload.iss !== clientId || payload.sub !== clientId)
      throw invalidClient("iss and sub must be the client_id");
    const accepted = [this.issuer, `${this.issuer}/`, `${this.issuer}/token`];
    if (!audiencesOf(payload).some((aud) => accepted.includes(aud))) {
      throw invalidClient(`aud must be the issuer ${this.issuer} or the token endpoint`);
    }
    const nowSeconds = this.now() / 1000;
    const exp = checkTimes({ ...payload, iat: undefined }, nowSeconds, invalidClient);
    if (exp > nowSeconds + MAX_ASSERTION_LIFETIME_SECONDS) {
      throw invalidClient(`exp is more than ${MAX_ASSERTION_LIFETIME_SECONDS} seconds away`);
    }
    const jti = jtiOf(payload, invalidClient, "jti is required (a unique id of up to 256 characters)");
    this.#used.use(`${clientId}\n${jti}`, exp, invalidClient, {
      used: "this assertion (jti) was already used",
      full: "too many assertions in flight; retry later",
    });
  }
}

/** An issuer whose JWTs the jwt-bearer grant takes: a workload platform, or an enterprise IdP issuing ID-JAGs. */
export interface TrustedAssertionIssuer {
  kind: "workload" | "enterprise";
  issuer: string;
  keys: KeyObject[];
  /** Accepted `aud` values; default this server's issuer and token endpoint. */
  audiences?: string[];
  account: string;
  subjects?: ReadonlySet<string>;
}

/** The issuers the options name, checked (keys public and of a known type, accounts seeded, no issuer twice). */
export function trustedIssuersOf(
  options: AssertionGrantOptions,
  accounts: ReadonlyMap<string, unknown>,
): TrustedAssertionIssuer[] {
  const trusted: TrustedAssertionIssuer[] = [];
  const entries = [
    ...(options.trustedWorkloadIssuers ?? []).map(
      (entry, index) => ["workload", entry, `trustedWorkloadIssuers[${index}]`] as const,
    ),
    ...(options.trustedEnterpriseIdps ?? []).map(
      (entry, index) => ["enterprise", entry, `trustedEnterpriseIdps[${index}]`] as const,
    ),
  ];
  for (const [kind, entry, where] of entries) {
    if (!entry.issuer) throw new Error(`${where}: issuer is required`);
    const keys = publicKeysOfJwks(entry.jwks, where);
    if (!accounts.has(entry.account)) {
      throw new Error(
        `${where}: no account or team "${entry.account}"; use one of ${[...accounts.keys()].join(", ")}.`,
      );
    }
    if (trusted.some((other) => other.issuer === entry.issuer)) {
      throw new Error(`${where}: the issuer ${entry.issuer} is named twice`);
    }
    const audience = "audience" in entry ? entry.audience : undefined;
    const subjects = "subjects" in entry ? entry.subjects : undefined;
    trusted.push({
      kind,
      issuer: entry.issuer,
      keys,
      account: entry.account,
      ...(audience !== undefined ? { audiences: [audience].flat() } : {}),
      ...(subjects ? { subjects: new Set(subjects) } : {}),
    });
  }
  return trusted;
}

export interface JwtBearerGrantOptions {
  /** This authorization server's issuer; the token endpoint is `<issuer>/token`. */
  issuer: string;
  trusted: TrustedAssertionIssuer[];
  grants: OAuthGrants;
  flows: AuthorizationFlows;
  now: () => number;
  /** True for a seeded person's id: the grant then acts as that person too. */
  isKnownUser: (id: string) => boolean;
}

/** The jwt-bearer grant (RFC 7523 §2.1) at `/token`; refusals are RFC 6749 §5.2 errors that never echo the assertion. */
export class JwtBearerGrant {
  readonly #options: JwtBearerGrantOptions;
  readonly #redeemed: UsedJtis;

  constructor(options: JwtBearerGrantOptions) {
    this.#options = options;
    this.#redeemed = new UsedJtis(options.now);
  }

  /** True when an issuer is trusted: the grant is then offered (metadata, pre-registered clients). */
  get offered(): boolean {
    return this.#options.trusted.length > 0;
  }

  async redeem(client: RegisteredClient, form: URLSearchParams): Promise<TokenResponseBody> {
    const assertion = form.get("assertion");
    if (!assertion) throw new OAuthError("invalid_request", "assertion is required (a JWT)");
    const jwt = decodeJwt(assertion);
    if (!jwt) throw invalidGrant("the assertion is not a compact JWT");
    const { header, payload } = jwt;
    const trusted = this.#options.trusted.find((entry) => entry.issuer === payload.iss);
    if (!trusted) throw invalidGrant("the assertion's issuer (iss) is not trusted here");
    if (!(await signedByOneOf(jwt, trusted.keys)))
      throw invalidGrant("the assertion's signature does not match a key of its issuer");
    const isIdJag = header.typ === ID_JAG_TYPE;
    if ((trusted.kind === "enterprise") !== isIdJag) {
      throw invalidGrant(
        trusted.kind === "enterprise"
          ? `an enterprise IdP's assertion must be an ID-JAG (typ ${ID_JAG_TYPE})`
          : "an ID-JAG is taken only from a trusted enterprise IdP",
      );
    }
    const { issuer } = this.#options;
    const accepted = trusted.audiences ?? [issuer, `${issuer}/`, ...(isIdJag ? [] : [`${issuer}/token`])];
    if (!audiencesOf(payload).some((aud) => accepted.includes(aud))) {
      throw invalidGrant(`the assertion's audience (aud) must be ${accepted[0]}`);
    }
    const exp = checkTimes(payload, this.#options.now() / 1000, invalidGrant);
    const subject = payload.sub;
    if (typeof subject !== "string" || subject.length === 0 || subject.length > 256) {
      throw invalidGrant("the assertion has no subject (sub)");
    }
    if (trusted.subjects && !trusted.subjects.has(subject)) {
      throw invalidGrant("the assertion's subject (sub) may not use this server");
    }
    let resource = form.get("resource");
    let allowedScopes: string[] | undefined;
    if (isIdJag) {
      if (payload.client_id !== client.client_id) {
        throw invalidGrant("the ID-JAG was issued to another client (client_id)");
      }
      if (typeof payload.resource === "string") {
        if (resource && resource.replace(/\/+$/, "") !== payload.resource.replace(/\/+$/, "")) {
          throw new OAuthError("invalid_target", "resource does not match the ID-JAG's resource");
        }
        resource = payload.resource;
      }
      if (typeof payload.scope === "string") allowedScopes = payload.scope.split(" ").filter(Boolean);
      const jti = jtiOf(payload, invalidGrant, "the ID-JAG has no jti (a unique id of up to 256 characters)");
      // An ID-JAG is redeemed once.
      this.#redeemed.use(`${trusted.issuer}\n${jti}`, exp, invalidGrant, {
        used: "this ID-JAG was already redeemed",
        full: "too many ID-JAGs in flight; retry later",
      });
    }
    const requested = form.get("scope") ?? (allowedScopes?.length ? allowedScopes.join(" ") : null);
    const checked = this.#options.flows.checkScopesAndResource(requested, resource);
    if (allowedScopes && checked.scopes.some((scope) => !allowedScopes.includes(scope))) {
      throw new OAuthError("invalid_scope", "the scope asked for is wider than the ID-JAG grants");
    }
    const approval: Approval = {
      clientId: client.client_id,
      account: trusted.account,
      ...checked,
      ...(isIdJag && this.#options.isKnownUser(subject) ? { userId: subject } : {}),
    };
    return tokenResponse(this.#options.grants.issueWithoutPerson(approval));
  }
}
