/** JWTs at the authorization server, on `jose`: `private_key_jwt` client assertions, the jwt-bearer grant (workload tokens, ID-JAGs), and the reference IdP at `<base>/idp` that issues ID tokens and exchanges them for ID-JAGs. */
import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  type JsonWebKey as NodeJwk,
  randomUUID,
} from "node:crypto";
import { decodeJwt, decodeProtectedHeader, errors, type JWTVerifyOptions, jwtVerify, SignJWT } from "jose";
import type { ServerContext } from "../context.js";
import { jsonResponse } from "../http.js";
import { sameSecret } from "../ids.js";
import type { AssertionGrantOptions, ReferenceIdpOptions } from "../options.js";
import {
  answerOAuthErrors,
  basicCredentials,
  formOf,
  NO_STORE,
  OAuthError,
  type OAuthGrants,
  type RegisteredClient,
  sameResource,
  seededAccount,
  type TokenResponseBody,
} from "./grants.js";

/** Algorithms taken and made: what RSA, P-256 and Ed25519 keys sign with (the bridge picks the one of its key). */
export const JWT_ALGORITHMS = ["RS256", "ES256", "EdDSA"] as const;
export const JWT_BEARER_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export const JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** The `typ` of an identity assertion authorization grant (SEP-990). */
const ID_JAG_TYPE = "oauth-id-jag+jwt";
/** Largest JWT read: an identity token with a few dozen claims and an RSA-4096 signature is well under 4 KiB. */
const MAX_JWT_CHARS = 16 * 1024;
/** Largest client assertion read: a signed JWT with an RSA-4096 signature is well under 2 KiB. */
const MAX_ASSERTION_CHARS = 8 * 1024;
const CLOCK_SKEW_SECONDS = 30;
/** Longest a client assertion may live: it is remembered (for replay) until it expires, so this bounds the memory. */
const MAX_ASSERTION_LIFETIME_SECONDS = 3600;
/** Most `jti`s remembered at once (each until its `exp`); past it, after pruning the expired, new ones are refused. */
const MAX_REMEMBERED_JTIS = 10_000;

type Refuse = (why: string) => OAuthError;
/** 400, not 401: the client did not authenticate through the Authorization header (RFC 6749 §5.2). */
const invalidClient: Refuse = (why) => new OAuthError("invalid_client", why, 400);
const invalidGrant: Refuse = (why) => new OAuthError("invalid_grant", why);

/** The JWS algorithm a key signs with here, or undefined for a key of another type. */
function algorithmOf(key: KeyObject): (typeof JWT_ALGORITHMS)[number] | undefined {
  if (key.asymmetricKeyType === "rsa") return "RS256";
  if (key.asymmetricKeyType === "ed25519") return "EdDSA";
  if (key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") return "ES256";
  return undefined;
}

/** The public keys of a JWKS; a private key, or a key of a type this server cannot check, is a configuration error. */
export function publicKeysOfJwks(jwks: { keys: JsonWebKey[] } | undefined, where: string): KeyObject[] {
  if (!Array.isArray(jwks?.keys) || jwks.keys.length === 0) throw new Error(`${where}: jwks has no keys`);
  return jwks.keys.map((jwk, index) => {
    if ("d" in jwk) throw new Error(`${where}: jwks.keys[${index}] is a private key; give the public half`);
    const key = createPublicKey({ key: jwk as NodeJwk, format: "jwk" });
    if (!algorithmOf(key))
      throw new Error(`${where}: jwks.keys[${index}] is not an RSA, P-256 or Ed25519 key`);
    return key;
  });
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

/** The claims and header of a JWT, read before its signature is checked (so that its keys can be found). */
function claimsOf(jwt: string, maxChars: number, refuse: Refuse) {
  if (jwt.length > maxChars) throw refuse("the assertion is too large");
  try {
    return { ...decodeJwt(jwt), header: decodeProtectedHeader(jwt) };
  } catch {
    throw refuse("the assertion is not a compact JWT");
  }
}

/**
 * The claims of a JWT that one of `keys` signed (with the algorithm of its type), with `exp` required and checked
 * as `options` say, give or take the clock skew; else `refuse(why)`, `signature` saying why when no key signed it.
 */
async function verified(
  jwt: string,
  keys: readonly KeyObject[],
  options: JWTVerifyOptions & { now: number },
  refuse: Refuse,
  signature: string,
) {
  const { now, ...checks } = options;
  if (jwt.length > MAX_JWT_CHARS) throw refuse("the assertion is too large");
  for (const key of keys) {
    try {
      return await jwtVerify(jwt, key, {
        ...checks,
        algorithms: [algorithmOf(key) as string],
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: new Date(now),
        requiredClaims: ["exp", ...(checks.requiredClaims ?? [])],
      });
    } catch (error) {
      // Another key of the set may have signed it.
      if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed)
        continue;
      if (error instanceof errors.JWTExpired || (error as errors.JWTClaimValidationFailed).claim === "exp")
        throw refuse("the assertion has expired (exp)");
      if (!(error instanceof errors.JWTClaimValidationFailed))
        throw refuse("the assertion is not a compact JWT");
      if (error.claim === "nbf") throw refuse("the assertion is not valid yet (nbf)");
      if (error.claim === "aud")
        throw refuse(`the assertion's audience (aud) must be ${[checks.audience].flat().join(" or ")}`);
      throw refuse(`the assertion's ${error.claim} is not valid`);
    }
  }
  throw refuse(signature);
}

/** JWTs taken once: each `jti` (under its issuer) is kept until its `exp`, bounded in number. */
class UsedJtis {
  readonly #until = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** Remembers the JWT's `jti` (at most 256 characters); refuses when it is missing, used or too many are in flight. */
  use(
    issuer: string,
    payload: Record<string, unknown>,
    refuse: Refuse,
    why: { what: string; used: string },
  ): void {
    const { jti, exp } = payload;
    if (typeof jti !== "string" || jti.length === 0 || jti.length > 256)
      throw refuse(`${why.what} has no jti (a unique id of up to 256 characters)`);
    const key = `${issuer}\n${jti}`;
    const now = this.now();
    if ((this.#until.get(key) ?? 0) > now) throw refuse(why.used);
    if (this.#until.size >= MAX_REMEMBERED_JTIS) {
      for (const [seen, until] of this.#until) if (until <= now) this.#until.delete(seen);
      if (this.#until.size >= MAX_REMEMBERED_JTIS)
        throw refuse(`too many ${why.what}s in flight; retry later`);
    }
    this.#until.set(key, ((exp as number) + CLOCK_SKEW_SECONDS) * 1000);
  }
}

/** The client an assertion names (`sub`), read before its signature is checked, so that its keys can be found. */
export function assertionSubject(assertion: string): string {
  const { sub } = claimsOf(assertion, MAX_ASSERTION_CHARS, invalidClient);
  if (typeof sub !== "string" || sub.length === 0) throw invalidClient("the assertion has no sub");
  return sub;
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
      (entry, i) => ["workload", entry, `trustedWorkloadIssuers[${i}]`] as const,
    ),
    ...(options.trustedEnterpriseIdps ?? []).map(
      (entry, i) => ["enterprise", entry, `trustedEnterpriseIdps[${i}]`] as const,
    ),
  ];
  for (const [kind, entry, where] of entries) {
    if (!entry.issuer) throw new Error(`${where}: issuer is required`);
    const keys = publicKeysOfJwks(entry.jwks, where);
    seededAccount(accounts, entry.account, where);
    if (trusted.some((other) => other.issuer === entry.issuer))
      throw new Error(`${where}: the issuer ${entry.issuer} is named twice`);
    const { audience, subjects } = entry as { audience?: string | string[]; subjects?: string[] };
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

export interface AssertionsOptions {
  /** This authorization server's issuer; the token endpoint is `<issuer>/token`. */
  issuer: string;
  trusted: TrustedAssertionIssuer[];
  grants: OAuthGrants;
  now: () => number;
  /** True for a seeded person's id: the grant then acts as that person too. */
  isKnownUser: (id: string) => boolean;
}

/**
 * JWTs presented at `/token`: `private_key_jwt` client assertions (RFC 7523 §2.2, §3) and the jwt-bearer grant
 * (RFC 7523 §2.1), each JWT taken once; refusals are RFC 6749 §5.2 errors that never echo the assertion.
 */
export class Assertions {
  readonly #options: AssertionsOptions;
  readonly #usedByClients: UsedJtis;
  readonly #redeemed: UsedJtis;

  constructor(options: AssertionsOptions) {
    this.#options = options;
    this.#usedByClients = new UsedJtis(options.now);
    this.#redeemed = new UsedJtis(options.now);
  }

  /** True when an issuer is trusted: the jwt-bearer grant is then offered (metadata, pre-registered clients). */
  get offered(): boolean {
    return this.#options.trusted.length > 0;
  }

  /** Throws `invalid_client` unless the assertion is signed by one of the client's keys and its claims hold for it. */
  async checkClient(assertion: string, client: RegisteredClient): Promise<void> {
    const { issuer, now } = this.#options;
    const clientId = client.client_id;
    const { payload } = await verified(
      assertion,
      publicKeysOfJwks(client.jwks, `oauthClients: client "${clientId}"`),
      { now: now(), audience: [issuer, `${issuer}/`, `${issuer}/token`] },
      invalidClient,
      "the assertion's signature does not match a key registered for this client",
    );
    if (payload.iss !== clientId || payload.sub !== clientId)
      throw invalidClient("iss and sub must be the client_id");
    if ((payload.exp as number) > now() / 1000 + MAX_ASSERTION_LIFETIME_SECONDS)
      throw invalidClient(`exp is more than ${MAX_ASSERTION_LIFETIME_SECONDS} seconds away`);
    this.#usedByClients.use(clientId, payload, invalidClient, {
      what: "the assertion",
      used: "this assertion (jti) was already used",
    });
  }

  /** The jwt-bearer grant: a workload token or an ID-JAG of a trusted issuer, for the issuer's account. */
  async redeem(client: RegisteredClient, form: URLSearchParams): Promise<TokenResponseBody> {
    const assertion = form.get("assertion");
    if (!assertion) throw new OAuthError("invalid_request", "assertion is required (a JWT)");
    const claims = claimsOf(assertion, MAX_JWT_CHARS, invalidGrant);
    const trusted = this.#options.trusted.find((entry) => entry.issuer === claims.iss);
    if (!trusted) throw invalidGrant("the assertion's issuer (iss) is not trusted here");
    const isIdJag = claims.header.typ === ID_JAG_TYPE;
    const { issuer, now, grants } = this.#options;
    const audience = trusted.audiences ?? [issuer, `${issuer}/`, ...(isIdJag ? [] : [`${issuer}/token`])];
    const { payload } = await verified(
      assertion,
      trusted.keys,
      { now: now(), audience },
      invalidGrant,
      "the assertion's signature does not match a key of its issuer",
    );
    if ((trusted.kind === "enterprise") !== isIdJag) {
      throw invalidGrant(
        isIdJag
          ? "an ID-JAG is taken only from a trusted enterprise IdP"
          : `an enterprise IdP's assertion must be an ID-JAG (typ ${ID_JAG_TYPE})`,
      );
    }
    if (typeof payload.iat === "number" && payload.iat > now() / 1000 + CLOCK_SKEW_SECONDS)
      throw invalidGrant("the assertion was issued in the future (iat)");
    const subject = payload.sub;
    if (typeof subject !== "string" || subject.length === 0 || subject.length > 256)
      throw invalidGrant("the assertion has no subject (sub)");
    if (trusted.subjects && !trusted.subjects.has(subject))
      throw invalidGrant("the assertion's subject (sub) may not use this server");
    let resource = form.get("resource");
    let allowedScopes: string[] | undefined;
    if (isIdJag) {
      if (payload.client_id !== client.client_id)
        throw invalidGrant("the ID-JAG was issued to another client (client_id)");
      if (typeof payload.resource === "string") {
        if (resource && !sameResource(resource, payload.resource))
          throw new OAuthError("invalid_target", "resource does not match the ID-JAG's resource");
        resource = payload.resource;
      }
      if (typeof payload.scope === "string") allowedScopes = payload.scope.split(" ").filter(Boolean);
      // An ID-JAG is redeemed once.
      this.#redeemed.use(trusted.issuer, payload, invalidGrant, {
        what: "the ID-JAG",
        used: "this ID-JAG was already redeemed",
      });
    }
    const requested = form.get("scope") ?? (allowedScopes?.length ? allowedScopes.join(" ") : null);
    const checked = grants.checkScopesAndResource(requested, resource);
    if (allowedScopes && checked.scopes.some((scope) => !allowedScopes.includes(scope)))
      throw new OAuthError("invalid_scope", "the scope asked for is wider than the ID-JAG grants");
    const userId = isIdJag && this.#options.isKnownUser(subject) ? { userId: subject } : {};
    return grants.issue(
      { clientId: client.client_id, account: trusted.account, ...checked, ...userId },
      false,
    ).body;
  }
}

export const IDP_PATH = "/idp";
export const IDP_METADATA_PATH = `/.well-known/oauth-authorization-server${IDP_PATH}`;
const TOKEN_EXCHANGE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN_TTL_SECONDS = 3600;
/** An ID-JAG is redeemed at once; five minutes covers a slow client. */
const ID_JAG_TTL_SECONDS = 300;
const KEY_ID = "reference-idp-1";

export interface ReferenceIdp {
  /** The IdP as an issuer the jwt-bearer grant trusts. */
  trusted: TrustedAssertionIssuer;
  /** Answers the IdP's paths; undefined for the rest. */
  handle(request: Request, path: string): Promise<Response | undefined>;
}

/** The reference server playing an enterprise IdP; its signing key lives in memory: ID tokens and ID-JAGs end with the process. */
export function createReferenceIdp(
  ctx: ServerContext,
  options: ReferenceIdpOptions,
  now: () => number,
): ReferenceIdp {
  seededAccount(ctx.accounts, options.account, "referenceIdp");
  const issuer = `${ctx.baseUrl}${IDP_PATH}`;
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const person = [...ctx.users.values()].find((user) => user.memberOf.includes(options.account));
  const seconds = () => Math.floor(now() / 1000);
  const sign = (typ: string, claims: Record<string, unknown>, ttl: number) =>
    signJwt({ typ }, { iss: issuer, ...claims, iat: seconds(), exp: seconds() + ttl }, privateKey, KEY_ID);

  /** `POST /idp/id-token`: an ID token for the account's first person, to the holder of the account's dev API key. */
  async function idToken(request: Request): Promise<Response> {
    if (request.method !== "POST") throw new OAuthError("invalid_request", "use POST", 405);
    const key = /^Bearer +(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    let account: string | undefined;
    for (const verify of ctx.tokenVerifiers) {
      const principal = key ? await verify(key) : null;
      if (principal) {
        account = principal.via === "api-key" ? principal.account : undefined;
        break;
      }
    }
    if (account !== options.account || !person)
      throw new OAuthError(
        "invalid_client",
        `send the dev API key of "${options.account}" as a Bearer token`,
        401,
      );
    const claims = { sub: person.id, aud: options.clientId, name: person.name };
    const token = await sign("JWT", claims, ID_TOKEN_TTL_SECONDS);
    return jsonResponse(200, { id_token: token, expires_in: ID_TOKEN_TTL_SECONDS }, NO_STORE);
  }

  /** `POST /idp/token`: RFC 8693 token exchange of this IdP's ID token for an ID-JAG (SEP-990). */
  async function tokenExchange(request: Request): Promise<Response> {
    const form = await formOf(request);
    const basic = basicCredentials(request.headers.get("authorization") ?? "");
    const secret = basic ? basic.secret : form.get("client_secret");
    const expected = options.clientSecret;
    const secretOk = expected === undefined ? !secret : secret !== null && sameSecret(secret, expected);
    if ((basic ? basic.clientId : form.get("client_id")) !== options.clientId || !secretOk)
      throw new OAuthError("invalid_client", "unknown client or wrong client secret", basic ? 401 : 400);
    const must = (name: string, value: string) => {
      if (form.get(name) !== value) throw new OAuthError("invalid_request", `${name} must be ${value}`);
    };
    if (form.get("grant_type") !== TOKEN_EXCHANGE_GRANT_TYPE)
      throw new OAuthError("unsupported_grant_type", `this IdP offers ${TOKEN_EXCHANGE_GRANT_TYPE} only`);
    must("requested_token_type", ID_JAG_TOKEN_TYPE);
    must("subject_token_type", ID_TOKEN_TYPE);
    if (form.get("audience")?.replace(/\/+$/, "") !== ctx.baseUrl)
      throw new OAuthError("invalid_target", `this IdP issues ID-JAGs for ${ctx.baseUrl} only`);
    const resource = form.get("resource");
    if (resource && !resource.startsWith(`${ctx.baseUrl}/`))
      throw new OAuthError("invalid_target", `resource must be one of ${ctx.baseUrl}`);
    const subjectToken = form.get("subject_token");
    if (!subjectToken) throw new OAuthError("invalid_request", "subject_token is required (an ID token)");
    const { payload } = await verified(
      subjectToken,
      [publicKey],
      { now: now(), issuer, audience: options.clientId, requiredClaims: ["sub"] },
      invalidGrant,
      "the ID token is not one this IdP issued",
    );
    const scope = form.get("scope");
    const claims = {
      sub: payload.sub,
      aud: ctx.baseUrl,
      client_id: options.mcpClientId ?? options.clientId,
      ...(resource ? { resource } : {}),
      ...(scope ? { scope } : {}),
      jti: randomUUID(),
    };
    const jag = await sign(ID_JAG_TYPE, claims, ID_JAG_TTL_SECONDS);
    const issued = { access_token: jag, issued_token_type: ID_JAG_TOKEN_TYPE, token_type: "N_A" };
    return jsonResponse(
      200,
      { ...issued, expires_in: ID_JAG_TTL_SECONDS, ...(scope ? { scope } : {}) },
      NO_STORE,
    );
  }

  return {
    trusted: { kind: "enterprise", issuer, keys: [publicKey], account: options.account },
    async handle(request, path) {
      if (path === IDP_METADATA_PATH) {
        const metadata = {
          issuer,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks.json`,
          grant_types_supported: [TOKEN_EXCHANGE_GRANT_TYPE],
          token_endpoint_auth_methods_supported: options.clientSecret
            ? ["client_secret_post", "client_secret_basic"]
            : ["none"],
        };
        return jsonResponse(200, metadata, { "cache-control": "public, max-age=3600" });
      }
      if (path === `${IDP_PATH}/jwks.json`) {
        const jwk = { ...publicKey.export({ format: "jwk" }), kid: KEY_ID, alg: "ES256", use: "sig" };
        return jsonResponse(200, { keys: [jwk] });
      }
      if (path === `${IDP_PATH}/id-token`) return answerOAuthErrors(() => idToken(request));
      if (path === `${IDP_PATH}/token`) return answerOAuthErrors(() => tokenExchange(request));
      return undefined;
    },
  };
}
