/** DPoP (RFC 9449) on the reference server: proofs checked with jose, tokens bound by `cnf.jkt`, nonces, and the replay ledger per key. */
import { randomBytes } from "node:crypto";
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors,
  type JWK,
  jwtVerify,
} from "jose";
import type { CredentialCheck, CredentialRefusal, PresentedCredential, Principal } from "../context.js";
import type { DpopMode, DpopNonceMode, DpopReplayLimits, OAuthServerOptions } from "../options.js";
import type { Store, StoreCollection } from "../store.js";
import {
  hashOf,
  OAuthError,
  REFRESH_TOKEN_TTL_MS,
  type RegisteredClient,
  type TokenResponseBody,
} from "./grants.js";

/** The algorithms proofs may be signed with (what P-256, Ed25519 and RSA keys sign with; never symmetric or `none`). */
export const DPOP_ALGORITHMS = ["ES256", "EdDSA", "RS256", "PS256"] as const;
/** Longest proof read: an RSA-4096 key and signature fit well under it. */
const MAX_PROOF_CHARS = 8 * 1024;
/** How old a proof's `iat` may be, and how far ahead (a client's clock may run a little fast). */
const MAX_PROOF_AGE_SECONDS = 300;
const MAX_PROOF_FUTURE_SECONDS = 60;
/** A server nonce is good for one period after the one it was issued in. */
const NONCE_PERIOD_MS = 5 * 60 * 1000;

/** What the request the proof came with must match. */
export interface ProofExpectation {
  method: string;
  /** The request's URL; compared without query and fragment. */
  url: string;
  /** Present when the proof accompanies an access token: the proof's `ath` must be its hash. */
  accessToken?: string;
  /** Seconds since the epoch: `iat` may be up to 300 s before, 60 s after. */
  nowSeconds: number;
  /** When given, the proof must be signed by the key of this thumbprint (the token's `cnf.jkt`). */
  boundTo?: string;
  /** When given, the proof must carry one of these nonces. */
  acceptedNonces?: readonly string[];
}

const invalid = (description: string) => new OAuthError("invalid_dpop_proof", description);

/**
 * Checks the `DPoP` header's value (one proof) against the request; rejects with an `OAuthError` (`use_dpop_nonce`
 * asks the client to retry with the server's nonce). Returns the key's thumbprint (`cnf.jkt`), `jti`, `iat` and nonce.
 */
export async function checkDpopProof(proof: string, expected: ProofExpectation) {
  if (proof.length > MAX_PROOF_CHARS) throw invalid("the DPoP proof is too long");
  let verified: Awaited<ReturnType<typeof jwtVerify>>;
  try {
    // RSA keys: the usual exponent and 2048 to 4096 bits, refused before verifying (a 3072-bit exponent cost 8-10x
    // the CPU per proof, and no client needs another).
    const jwk = decodeProtectedHeader(proof).jwk;
    if (jwk?.kty === "RSA") {
      if (jwk.e !== "AQAB") throw invalid("the proof's RSA key must have the public exponent 65537");
      const modulus = Buffer.from(jwk.n ?? "", "base64url");
      const bits = modulus.length * 8 - Math.clz32(modulus[0] ?? 0) + 24;
      if (bits < 2048 || bits > 4096) throw invalid("the proof's RSA key must be 2048 to 4096 bits");
    }
    verified = await jwtVerify(proof, EmbeddedJWK, { typ: "dpop+jwt", algorithms: [...DPOP_ALGORITHMS] });
  } catch (error) {
    throw error instanceof OAuthError ? error : invalid(whyRefused(error));
  }
  const { payload, protectedHeader } = verified;
  const { jti, htm, htu, iat, nonce } = payload as Record<string, unknown>;
  if (typeof jti !== "string" || jti.length === 0 || jti.length > 256) throw invalid("the proof needs a jti");
  if (htm !== expected.method.toUpperCase()) throw invalid("the proof's htm is not the request's method");
  if (typeof htu !== "string" || normalisedUri(htu) !== normalisedUri(expected.url))
    throw invalid("the proof's htu is not the request's URL");
  if (typeof iat !== "number" || !Number.isFinite(iat)) throw invalid("the proof needs a numeric iat");
  if (
    iat < expected.nowSeconds - MAX_PROOF_AGE_SECONDS ||
    iat > expected.nowSeconds + MAX_PROOF_FUTURE_SECONDS
  )
    throw invalid("the proof's iat is outside the accepted window");
  if (expected.accessToken !== undefined && payload.ath !== hashOf(expected.accessToken))
    throw invalid("the proof's ath is not the hash of the access token");
  const jkt = await calculateJwkThumbprint(protectedHeader.jwk as JWK, "sha256");
  // Another key than the token's is refused as such, before any nonce round trip.
  if (expected.boundTo !== undefined && jkt !== expected.boundTo)
    throw invalid("the proof is signed by another key than the token is bound to");
  if (expected.acceptedNonces && (typeof nonce !== "string" || !expected.acceptedNonces.includes(nonce)))
    throw new OAuthError("use_dpop_nonce", "Use the DPoP-Nonce the server sent in the proof");
  return { jkt, jti, iat, ...(typeof nonce === "string" ? { nonce } : {}) };
}

/** `htu` compared as RFC 9449 §4.3 says: scheme and host case-folded, default ports dropped, no query or fragment. */
function normalisedUri(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  return `${url.origin}${url.pathname}`;
}

/** What the client is told of a JWS jose refused, in the words of RFC 9449 §4.3. */
function whyRefused(error: unknown): string {
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return "the proof's signature does not verify with its jwk";
  if (error instanceof errors.JOSEAlgNotAllowed)
    return `the proof's alg must be one of ${DPOP_ALGORITHMS.join(", ")}`;
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === "typ")
    return 'the proof\'s typ must be "dpop+jwt"';
  if (error instanceof errors.JWTExpired || error instanceof errors.JWTClaimValidationFailed)
    return `the proof's ${(error as errors.JWTClaimValidationFailed).claim} claim is not valid now`;
  if (
    error instanceof errors.JOSENotSupported ||
    (error instanceof errors.JWSInvalid && /"jwk"/.test(error.message))
  )
    return "the proof's jwk is not a usable public key";
  return "the DPoP header is not one compact JWS with a JSON header and claims";
}

/** A proof that passed every check but the replay ledger's: what spending it remembers. */
type CheckedUse = { jkt: string; jti: string; forgetAt: number };

/**
 * A token request's proof, checked and already remembered (two requests with one proof cannot both pass the awaits
 * before the grant): `release` forgets it again when the request is refused after all, as it was never used.
 */
type TokenRequestProof = { jkt: string; release(): void };

export class DpopPolicy {
  readonly #mode: DpopMode;
  readonly #nonces: DpopNonceMode;
  /**
   * True when tokens outlive this process (a data file): a proof used before a restart is not in the new ledger, so
   * one that could predate this process must carry a nonce of it (see `#check`).
   */
  readonly #outlivesProcess: boolean;
  readonly #ledger: DpopReplayLedger;
  /** Each bound token's key, under the token's hash, until the token expires. */
  readonly #bindings: StoreCollection<{ jkt: string; until: number }>;
  /** Expired bindings are swept after this many new ones, so the collection holds about as many as live tokens. */
  #bindsUntilSweep = 256;
  /** The nonce handed out and the one before it, both accepted. */
  #nonce = { value: freshNonce(), previous: freshNonce(), since: 0 };
  /**
   * Proofs with an `iat` before this (s) may have been used before this process started, when tokens outlive it:
   * any proof used then had an `iat` at most `MAX_PROOF_FUTURE_SECONDS` past its use, so before start + that.
   */
  readonly #mayPredateStart: number;

  constructor(
    options: OAuthServerOptions,
    store: Store,
    private readonly tokenEndpoint: string,
    private readonly now: () => number,
  ) {
    this.#mode = options.dpop ?? "allowed";
    this.#nonces = options.dpopNonces ?? "everywhere";
    this.#outlivesProcess = store.dataFile !== undefined;
    this.#ledger = new DpopReplayLedger(options.dpopReplayLimits);
    this.#bindings = store.collection("oauth.dpop-bindings");
    this.#nonce.since = now();
    this.#mayPredateStart = this.#outlivesProcess
      ? now() / 1000 + MAX_PROOF_FUTURE_SECONDS
      : Number.NEGATIVE_INFINITY;
  }

  /** False when `dpop: "off"`: the metadata says nothing and the `DPoP` header is ignored at the token endpoint. */
  get offered(): boolean {
    return this.#mode !== "off";
  }

  /** RFC 9728 §2 fields of `/mcp` and `/v2`: the proof algorithms taken, and whether only bound tokens are. */
  resourceMetadata(): Record<string, unknown> {
    if (!this.offered) return {};
    return {
      dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
      dpop_bound_access_tokens_required: this.#mode === "required",
    };
  }

  /**
   * The key thumbprint a token request's proof binds the new tokens to, or undefined for Bearer tokens. A bound
   * refresh token needs a proof by its key; `dpop: "required"` needs a proof on every token request.
   */
  async tokenRequestKey(request: Request, form: URLSearchParams): Promise<TokenRequestProof | undefined> {
    if (!this.offered) return undefined;
    const refreshToken = form.get("grant_type") === "refresh_token" ? form.get("refresh_token") : null;
    const boundTo = refreshToken ? this.#keyOf(refreshToken) : undefined;
    const proof = request.headers.get("dpop");
    if (proof === null) {
      if (boundTo) throw invalid("This refresh token is DPoP-bound: send a DPoP proof");
      if (this.#mode === "required")
        throw invalid("This server issues DPoP-bound tokens only: send a DPoP proof");
      return undefined;
    }
    const expected = { method: request.method, url: this.tokenEndpoint, nonce: this.#nonces !== "off" };
    const checked = await this.#check(proof, expected);
    if (boundTo && boundTo !== checked.jkt) throw invalid("The refresh token is bound to another key");
    // Remembered before the grant is spent; a refused grant releases it.
    const refused = this.#spend(checked);
    const code = refused?.full ? "temporarily_unavailable" : "invalid_dpop_proof";
    if (refused) throw new OAuthError(code, refused.description);
    return { jkt: checked.jkt, release: () => this.#ledger.forget(checked.jkt, checked.jti) };
  }

  /** The token response with its tokens bound to `jkt` (refresh tokens only for public clients, RFC 9449 §5). */
  bind(
    body: TokenResponseBody,
    proof: TokenRequestProof | undefined,
    client: RegisteredClient,
  ): TokenResponseBody {
    if (!proof) return body;
    this.#bind(body.access_token, proof.jkt, body.expires_in * 1000);
    if (body.refresh_token && client.token_endpoint_auth_method === "none")
      this.#bind(body.refresh_token, proof.jkt, REFRESH_TOKEN_TTL_MS);
    return { ...body, token_type: "DPoP" };
  }

  /** Binds a token just issued to the key (RFC 9449 `cnf.jkt`) for as long as it lives. */
  #bind(token: string, jkt: string, lifetimeMs: number): void {
    const now = this.now();
    if (--this.#bindsUntilSweep <= 0) {
      this.#bindsUntilSweep = 256;
      for (const [hash, binding] of this.#bindings.entries())
        if (binding.until <= now) this.#bindings.delete(hash);
    }
    this.#bindings.set(hashOf(token), { jkt, until: now + lifetimeMs });
  }

  /** The thumbprint the token is bound to, or undefined (not bound, or past its lifetime). */
  #keyOf(token: string): string | undefined {
    const binding = this.#bindings.get(hashOf(token));
    return binding && binding.until > this.now() ? binding.jkt : undefined;
  }

  /** The principal of an access token, with the key it is bound to (`jkt`) when it is. */
  withKey(token: string, principal: Principal | null): Principal | null {
    const jkt = principal?.via === "oauth" ? this.#keyOf(token) : undefined;
    return principal && jkt ? { ...principal, jkt } : principal;
  }

  /** Every token endpoint answer carries the current nonce when nonces are on, or tokens outlive restarts (§8). */
  withNonce(response: Response): Response {
    if (this.offered && (this.#nonces !== "off" || this.#outlivesProcess))
      response.headers.set("dpop-nonce", this.#currentNonces()[0]);
    return response;
  }

  /**
   * The rule of `/mcp` and `/v2`: a bound token only with the `DPoP` scheme and a proof by its key. A proof that
   * passes is not yet used: the route calls `spend` once its own checks (resource, rate) passed, so refused requests
   * fill no memory, and `spend` refuses a proof used in the meantime.
   */
  readonly checkCredential: CredentialCheck = async (presented) => {
    const { principal, scheme } = presented;
    const refuse = (error: string, description: string) => ({
      refusal: this.#refusal(presented, error, description),
    });
    if (principal.via !== "oauth") {
      return scheme === "dpop"
        ? refuse("invalid_token", "API keys are sent as Bearer")
        : { spend: () => undefined };
    }
    if (!principal.jkt) {
      if (scheme === "dpop")
        return refuse("invalid_token", "This access token is not DPoP-bound: send it as Bearer");
      if (this.#mode === "required")
        return refuse("invalid_token", "This server accepts DPoP-bound tokens only: sign in again");
      return { spend: () => undefined };
    }
    if (scheme !== "dpop")
      return refuse(
        "invalid_token",
        "This access token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof",
      );
    if (presented.proof === null) return refuse("invalid_dpop_proof", "A DPoP proof is required");
    let use: CheckedUse;
    try {
      const { method, url, token: accessToken } = presented;
      const nonce = this.#nonces === "everywhere";
      use = await this.#check(presented.proof, { method, url, accessToken, nonce, boundTo: principal.jkt });
    } catch (error) {
      if (error instanceof OAuthError) return refuse(error.error, error.description);
      throw error;
    }
    return {
      spend: () => {
        const refused = this.#spend(use);
        if (!refused) return undefined;
        const refusal = this.#refusal(presented, "invalid_dpop_proof", refused.description);
        if (!refused.full) return refusal;
        return { ...refusal, status: 429, headers: { "retry-after": String(refused.full) } };
      },
    };
  };

  /**
   * Checks a proof, its key and that it was not used before; remembering it is `#spend`'s. When tokens outlive the
   * process, a proof whose `iat` could predate this process must carry one of its nonces (RFC 9449 §9
   * `use_dpop_nonce`, whatever `dpopNonces` says): the ledger that saw it used is gone, a nonce proves it is new.
   */
  async #check(
    proof: string,
    expected: { method: string; url: string; accessToken?: string; nonce: boolean; boundTo?: string },
  ): Promise<CheckedUse> {
    const { nonce, ...request } = expected;
    const checked = await checkDpopProof(proof, {
      ...request,
      nowSeconds: this.now() / 1000,
      ...(nonce ? { acceptedNonces: this.#currentNonces() } : {}),
    });
    if (this.#ledger.used(checked.jkt, checked.jti)) throw invalid("This DPoP proof was already used");
    if (checked.iat < this.#mayPredateStart && !this.#currentNonces().includes(checked.nonce ?? ""))
      throw new OAuthError("use_dpop_nonce", "The server restarted: use its DPoP-Nonce in the proof");
    const forgetAt = checked.iat + MAX_PROOF_AGE_SECONDS + MAX_PROOF_FUTURE_SECONDS;
    return { jkt: checked.jkt, jti: checked.jti, forgetAt };
  }

  /**
   * Remembers the proof as used, or says why not: used meanwhile, or its key has used as many as the ledger
   * remembers (`full`: the seconds until it has room; never by forgetting a live proof, nor at another key's cost).
   */
  #spend(use: CheckedUse): { description: string; full?: number } | undefined {
    if (this.#ledger.used(use.jkt, use.jti)) return { description: "This DPoP proof was already used" };
    const full = this.#ledger.room(use.jkt, this.now() / 1000)?.retryAfterSeconds;
    if (full) {
      const description = `this key has used as many DPoP proofs as the server remembers; retry after ${full} s`;
      return { description, full };
    }
    this.#ledger.remember(use.jkt, use.jti, use.forgetAt);
    return undefined;
  }

  /** The nonce to hand out first, then the previous one (still accepted for one period). */
  #currentNonces(): [string, string] {
    const now = this.now();
    if (now - this.#nonce.since >= NONCE_PERIOD_MS)
      this.#nonce = { value: freshNonce(), previous: this.#nonce.value, since: now };
    return [this.#nonce.value, this.#nonce.previous];
  }

  #refusal(presented: PresentedCredential, error: string, description: string): CredentialRefusal {
    return {
      error,
      description,
      wwwAuthenticate:
        `DPoP error="${error}", error_description="${description}", algs="${DPOP_ALGORITHMS.join(" ")}", ` +
        `resource_metadata="${presented.resourceMetadataUrl}"`,
      headers: error === "use_dpop_nonce" ? { "dpop-nonce": this.#currentNonces()[0] } : {},
    };
  }
}

function freshNonce(): string {
  return randomBytes(24).toString("base64url");
}

export const DEFAULT_DPOP_REPLAY_LIMITS: Required<DpopReplayLimits> = { perKey: 20_000 };

/**
 * Used proofs by key, each key's in the order they were used. An entry goes only when its proof can no longer be
 * accepted (its `iat` left the window: `forgetAt`, in seconds). A key full of live entries is refused until its
 * oldest ages out: a flood of fresh proofs costs that key a wait, never another key anything, and never makes the
 * ledger forget. There is no bound across keys: each entry is a request that passed the per-credential rate limit,
 * and it is gone within the proof window.
 */
export class DpopReplayLedger {
  readonly #perKey: number;
  readonly #byKey = new Map<string, Map<string, number>>();

  constructor(limits: DpopReplayLimits = {}) {
    this.#perKey = limits.perKey ?? DEFAULT_DPOP_REPLAY_LIMITS.perKey;
    if (!(this.#perKey >= 1)) throw new RangeError("dpopReplayLimits needs perKey >= 1");
  }

  used(jkt: string, jti: string): boolean {
    return this.#byKey.get(jkt)?.has(jti) ?? false;
  }

  /** Undefined when one more proof of `jkt` can be remembered, after dropping the key's entries no longer live. */
  room(jkt: string, nowSeconds: number): { retryAfterSeconds: number } | undefined {
    const proofs = this.#byKey.get(jkt);
    if (!proofs) return undefined;
    // Kept in the order used, so the aged-out ones are mostly at the front; one behind a live one stays at most a
    // window longer (kept too long, never too short).
    for (const [jti, forgetAt] of proofs) {
      if (forgetAt > nowSeconds) break;
      proofs.delete(jti);
    }
    if (proofs.size === 0) this.#byKey.delete(jkt);
    if (proofs.size < this.#perKey) return undefined;
    const oldest = proofs.values().next().value ?? nowSeconds;
    return { retryAfterSeconds: Math.max(1, Math.ceil(oldest - nowSeconds)) };
  }

  /** Remembers a proof until `forgetAt`; call `room` first in the same turn of the event loop. */
  remember(jkt: string, jti: string, forgetAt: number): void {
    const proofs = this.#byKey.get(jkt) ?? new Map<string, number>();
    this.#byKey.set(jkt, proofs);
    if (!proofs.has(jti)) proofs.set(jti, forgetAt);
  }

  /** Forgets a proof remembered for a request that was then refused: it was never used, so it may be used once. */
  forget(jkt: string, jti: string): void {
    const proofs = this.#byKey.get(jkt);
    proofs?.delete(jti);
    if (proofs?.size === 0) this.#byKey.delete(jkt);
  }
}
