/** DPoP (RFC 9449) on the reference server: proofs at the token endpoint, tokens bound by `cnf.jkt`, proofs checked on `/mcp` and `/v2`, nonces and replay. */
import { randomBytes } from "node:crypto";
import type { CredentialCheck, CredentialRefusal, PresentedCredential, Principal } from "../context.js";
import type { DpopMode, DpopNonceMode } from "../options.js";
import type { DpopBindings } from "./dpop-bindings.js";
import { checkDpopProof, DPOP_ALGORITHMS, DpopProofError } from "./dpop-proof.js";
import { DpopReplayLedger, type DpopReplayLimits } from "./dpop-replay.js";
import { REFRESH_TOKEN_TTL_MS } from "./grants.js";
import { OAuthError, type TokenResponseBody } from "./provider.js";
import type { RegisteredClient } from "./registration.js";

export { DPOP_ALGORITHMS } from "./dpop-proof.js";

/** How old a proof's `iat` may be, and how far ahead (a client's clock may run a little fast). */
const MAX_PROOF_AGE_SECONDS = 300;
const MAX_PROOF_FUTURE_SECONDS = 60;
/** A server nonce is good for one period after the one it was issued in. */
const NONCE_PERIOD_MS = 5 * 60 * 1000;

/** A proof that passed every check but the replay ledger's: what spending it remembers. */
interface CheckedUse {
  jkt: string;
  jti: string;
  forgetAt: number;
  /** The nonce generation the proof carried, when this endpoint asked for one. */
  nonceGeneration: number | undefined;
}

/** Why the ledger cannot take a proof now: ask for the new nonce, or come back later. */
interface RoomRefusal {
  error: "use_dpop_nonce" | "too_many_proofs";
  description: string;
  retryAfterSeconds: number;
}

/**
 * A token request's proof, checked and already remembered (two requests with one proof cannot both pass the awaits
 * before the grant): `release` forgets it again when the request is refused after all, as it was never used.
 */
export interface TokenRequestProof {
  jkt: string;
  release(): void;
}

export interface DpopPolicyOptions {
  mode: DpopMode;
  nonces: DpopNonceMode;
  bindings: DpopBindings;
  tokenEndpoint: string;
  now: () => number;
  replayLimits?: DpopReplayLimits | undefined;
}

export class DpopPolicy {
  readonly #options: DpopPolicyOptions;
  readonly #ledger: DpopReplayLedger;
  /** The nonce handed out (generation `generation`) and the one before it (`generation - 1`), both accepted. */
  #nonce = { value: freshNonce(), previous: freshNonce(), since: 0, generation: 1 };

  constructor(options: DpopPolicyOptions) {
    this.#options = options;
    this.#ledger = new DpopReplayLedger(options.replayLimits);
    this.#nonce.since = options.now();
  }

  /** False when `dpop: "off"`: the metadata says nothing and the `DPoP` header is ignored at the token endpoint. */
  get offered(): boolean {
    return this.#options.mode !== "off";
  }

  /** RFC 9728 §2 fields of `/mcp` and `/v2`: the proof algorithms taken, and whether only bound tokens are. */
  resourceMetadata(): Record<string, unknown> {
    if (!this.offered) return {};
    return {
      dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
      dpop_bound_access_tokens_required: this.#options.mode === "required",
    };
  }

  /**
   * The key thumbprint a token request's proof binds the new tokens to, or undefined for Bearer tokens. A bound
   * refresh token needs a proof by its key; `dpop: "required"` needs a proof on every token request.
   */
  async tokenRequestKey(request: Request, form: URLSearchParams): Promise<TokenRequestProof | undefined> {
    if (!this.offered) return undefined;
    const refreshToken = form.get("grant_type") === "refresh_token" ? form.get("refresh_token") : null;
    const boundTo = refreshToken ? this.#options.bindings.keyOf(refreshToken) : undefined;
    const proof = request.headers.get("dpop");
    if (proof === null) {
      if (boundTo)
        throw new OAuthError("invalid_dpop_proof", "This refresh token is DPoP-bound: send a DPoP proof");
      if (this.#options.mode === "required") {
        throw new OAuthError(
          "invalid_dpop_proof",
          "This server issues DPoP-bound tokens only: send a DPoP proof",
        );
      }
      return undefined;
    }
    try {
      const checked = await this.#check(proof, {
        method: request.method,
        url: this.#options.tokenEndpoint,
        nonce: this.#options.nonces !== "off",
      });
      if (this.#ledger.used(checked.jkt, checked.jti))
        throw new DpopProofError("invalid_dpop_proof", "This DPoP proof was already used");
      if (boundTo && boundTo !== checked.jkt) {
        throw new DpopProofError("invalid_dpop_proof", "The refresh token is bound to another key");
      }
      // Room is made (or refused) and the proof remembered before the grant is spent; a refused grant releases it.
      const full = this.#makeRoom(checked);
      if (full) {
        throw new OAuthError(
          full.error === "use_dpop_nonce" ? "use_dpop_nonce" : "temporarily_unavailable",
          full.description,
        );
      }
      this.#remember(checked);
      return { jkt: checked.jkt, release: () => this.#ledger.forget(checked.jkt, checked.jti) };
    } catch (error) {
      if (error instanceof DpopProofError) throw new OAuthError(error.error, error.description);
      throw error;
    }
  }

  /** The token response with its tokens bound to `jkt` (refresh tokens only for public clients, RFC 9449 §5). */
  bind(
    body: TokenResponseBody,
    proof: TokenRequestProof | undefined,
    client: RegisteredClient,
  ): TokenResponseBody {
    if (!proof) return body;
    const { jkt } = proof;
    const { bindings } = this.#options;
    bindings.bind(body.access_token, jkt, body.expires_in * 1000);
    if (body.refresh_token && client.token_endpoint_auth_method === "none") {
      bindings.bind(body.refresh_token, jkt, REFRESH_TOKEN_TTL_MS);
    }
    return { ...body, token_type: "DPoP" };
  }

  /** The principal of an access token, with the key it is bound to (`jkt`) when it is. */
  withKey(token: string, principal: Principal | null): Principal | null {
    const jkt = principal?.via === "oauth" ? this.#options.bindings.keyOf(token) : undefined;
    return principal && jkt ? { ...principal, jkt } : principal;
  }

  /** Every token endpoint answer carries the current nonce when nonces are on (RFC 9449 §8). */
  withNonce(response: Response): Response {
    if (!this.offered || this.#options.nonces === "off") return response;
    response.headers.set("dpop-nonce", this.#currentNonces()[0]!);
    return response;
  }

  /**
   * The rule of `/mcp` and `/v2`: a bound token only with the `DPoP` scheme and a proof by its key. A proof that
   * passes is not yet used: the route calls `spend` once its own checks (resource, rate) passed, so refused requests
   * fill no memory, and `spend` refuses a proof used in the meantime.
   */
  readonly checkCredential: CredentialCheck = async (presented) => {
    const verdict = await this.#verdict(presented);
    if (verdict === undefined) return { spend: () => undefined };
    if ("error" in verdict) return { refusal: verdict };
    return {
      spend: () => {
        if (this.#ledger.used(verdict.jkt, verdict.jti)) {
          return this.#refusal(presented, "invalid_dpop_proof", "This DPoP proof was already used");
        }
        const full = this.#makeRoom(verdict);
        if (full) return this.#busy(presented, full);
        this.#remember(verdict);
        return undefined;
      },
    };
  };

  async #verdict(presented: PresentedCredential): Promise<CredentialRefusal | CheckedUse | undefined> {
    const { principal, scheme } = presented;
    if (principal.via !== "oauth") {
      return scheme === "dpop"
        ? this.#refusal(presented, "invalid_token", "API keys are sent as Bearer")
        : undefined;
    }
    if (!principal.jkt) {
      if (scheme === "dpop") {
        return this.#refusal(
          presented,
          "invalid_token",
          "This access token is not DPoP-bound: send it as Bearer",
        );
      }
      if (this.#options.mode === "required") {
        return this.#refusal(
          presented,
          "invalid_token",
          "This server accepts DPoP-bound tokens only: sign in again",
        );
      }
      return undefined;
    }
    if (scheme !== "dpop") {
      return this.#refusal(
        presented,
        "invalid_token",
        "This access token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof",
      );
    }
    if (presented.proof === null)
      return this.#refusal(presented, "invalid_dpop_proof", "A DPoP proof is required");
    try {
      return await this.#check(presented.proof, {
        method: presented.method,
        url: presented.url,
        accessToken: presented.token,
        nonce: this.#options.nonces === "everywhere",
        boundTo: principal.jkt,
      });
    } catch (error) {
      if (error instanceof DpopProofError) return this.#refusal(presented, error.error, error.description);
      throw error;
    }
  }

  /** Checks a proof, its key and that it was not used before; remembering it is the caller's `spend`. */
  async #check(
    proof: string,
    expected: { method: string; url: string; accessToken?: string; nonce: boolean; boundTo?: string },
  ): Promise<CheckedUse> {
    const nowSeconds = this.#options.now() / 1000;
    const checked = await checkDpopProof(proof, {
      method: expected.method,
      url: expected.url,
      ...(expected.accessToken !== undefined ? { accessToken: expected.accessToken } : {}),
      nowSeconds,
      maxAgeSeconds: MAX_PROOF_AGE_SECONDS,
      maxFutureSeconds: MAX_PROOF_FUTURE_SECONDS,
      ...(expected.boundTo !== undefined ? { boundTo: expected.boundTo } : {}),
      ...(expected.nonce ? { acceptedNonces: this.#currentNonces() } : {}),
    });
    if (this.#ledger.used(checked.jkt, checked.jti))
      throw new DpopProofError("invalid_dpop_proof", "This DPoP proof was already used");
    return {
      jkt: checked.jkt,
      jti: checked.jti,
      forgetAt: checked.iat + MAX_PROOF_AGE_SECONDS + MAX_PROOF_FUTURE_SECONDS,
      nonceGeneration: expected.nonce ? this.#generationOf(checked.nonce) : undefined,
    };
  }

  /**
   * Room for one more proof of the key, never by forgetting a proof still acceptable. Full, where proofs carry server
   * nonces: both nonces are retired, which makes every proof carrying them unacceptable, so their entries go; the
   * client is asked for the new nonce (`use_dpop_nonce`). Full of proofs without nonces: the proof is refused.
   */
  #makeRoom(use: CheckedUse): RoomRefusal | undefined {
    const nowSeconds = this.#options.now() / 1000;
    let full = this.#ledger.room(use.jkt, nowSeconds);
    if (!full) return undefined;
    if (use.nonceGeneration !== undefined && this.#ledger.withNonce > 0) {
      this.#retireNonces();
      full = this.#ledger.room(use.jkt, nowSeconds);
      if (!full)
        return { error: "use_dpop_nonce", description: "Use the new DPoP-Nonce", retryAfterSeconds: 0 };
    }
    const whose = full.full === "key" ? "this key has used" : "the server holds";
    return {
      retryAfterSeconds: full.retryAfterSeconds,
      error: "too_many_proofs",
      description: `${whose} as many DPoP proofs as it can remember; retry after ${full.retryAfterSeconds} s`,
    };
  }

  #remember(use: CheckedUse): void {
    this.#ledger.remember(use.jkt, use.jti, { forgetAt: use.forgetAt, nonceGeneration: use.nonceGeneration });
  }

  /** The generation of a nonce accepted just now (the check already refused any other). */
  #generationOf(nonce: string | undefined): number {
    return nonce === this.#nonce.value ? this.#nonce.generation : this.#nonce.generation - 1;
  }

  /** Two new nonces at once: no proof carrying an earlier one is accepted again, so their entries can go. */
  #retireNonces(): void {
    const generation = this.#nonce.generation + 2;
    this.#nonce = { value: freshNonce(), previous: freshNonce(), since: this.#options.now(), generation };
    this.#ledger.forgetNonceGenerationsBefore(generation - 1);
  }

  /** The nonce to hand out first, then the previous one (still accepted for one period). */
  #currentNonces(): [string, string] {
    const now = this.#options.now();
    if (now - this.#nonce.since >= NONCE_PERIOD_MS) {
      const generation = this.#nonce.generation + 1;
      this.#nonce = { value: freshNonce(), previous: this.#nonce.value, since: now, generation };
    }
    return [this.#nonce.value, this.#nonce.previous];
  }

  /** The answer when the ledger cannot take the proof: a nonce to retry with, or 429 with `Retry-After`. */
  #busy(presented: PresentedCredential, full: RoomRefusal): CredentialRefusal {
    if (full.error === "use_dpop_nonce") return this.#refusal(presented, "use_dpop_nonce", full.description);
    return {
      ...this.#refusal(presented, "invalid_dpop_proof", full.description),
      status: 429,
      headers: { "retry-after": String(full.retryAfterSeconds) },
    };
  }

  #refusal(presented: PresentedCredential, error: string, description: string): CredentialRefusal {
    const headers: Record<string, string> = {};
    if (error === "use_dpop_nonce") headers["dpop-nonce"] = this.#currentNonces()[0];
    return {
      error,
      description,
      wwwAuthenticate:
        `DPoP error="${error}", error_description="${description}", algs="${DPOP_ALGORITHMS.join(" ")}", ` +
        `resource_metadata="${presented.resourceMetadataUrl}"`,
      headers,
    };
  }
}

function freshNonce(): string {
  return randomBytes(24).toString("base64url");
}
