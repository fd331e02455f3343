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
}

/** Why the ledger cannot take a proof now: its key has used as many as it can remember; come back later. */
interface RoomRefusal {
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
  /**
   * True when tokens outlive this process (a data file): a proof used before a restart is not in the new ledger, so
   * one that could predate this process must carry a nonce of it (see `#check`).
   */
  tokensOutliveProcess?: boolean;
}

export class DpopPolicy {
  readonly #options: DpopPolicyOptions;
  readonly #ledger: DpopReplayLedger;
  /** The nonce handed out and the one before it, both accepted. */
  #nonce = { value: freshNonce(), previous: freshNonce(), since: 0 };
  /**
   * Proofs with an `iat` before this (s) may have been used before this process started, when tokens outlive it:
   * any proof used then had an `iat` at most `MAX_PROOF_FUTURE_SECONDS` past its use, so before start + that.
   */
  readonly #mayPredateStart: number;

  constructor(options: DpopPolicyOptions) {
    this.#options = options;
    this.#ledger = new DpopReplayLedger(options.replayLimits);
    this.#nonce.since = options.now();
    this.#mayPredateStart = options.tokensOutliveProcess
      ? options.now() / 1000 + MAX_PROOF_FUTURE_SECONDS
      : Number.NEGATIVE_INFINITY;
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
      if (full) throw new OAuthError("temporarily_unavailable", full.description);
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

  /** Every token endpoint answer carries the current nonce when nonces are on, or tokens outlive restarts (§8). */
  withNonce(response: Response): Response {
    if (!this.offered || (this.#options.nonces === "off" && !this.#options.tokensOutliveProcess))
      return response;
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

  /**
   * Checks a proof, its key and that it was not used before; remembering it is the caller's `spend`. When tokens
   * outlive the process, a proof whose `iat` could predate this process must carry one of its nonces (RFC 9449 §9
   * `use_dpop_nonce`, whatever `dpopNonces` says): the ledger that saw it used is gone, a nonce proves it is new.
   */
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
    if (checked.iat < this.#mayPredateStart && !this.#currentNonces().includes(checked.nonce ?? "")) {
      throw new DpopProofError("use_dpop_nonce", "The server restarted: use its DPoP-Nonce in the proof");
    }
    return {
      jkt: checked.jkt,
      jti: checked.jti,
      forgetAt: checked.iat + MAX_PROOF_AGE_SECONDS + MAX_PROOF_FUTURE_SECONDS,
    };
  }

  /** Room for one more proof of the key, never by forgetting a proof still acceptable, nor at another key's cost. */
  #makeRoom(use: CheckedUse): RoomRefusal | undefined {
    const full = this.#ledger.room(use.jkt, this.#options.now() / 1000);
    if (!full) return undefined;
    return {
      retryAfterSeconds: full.retryAfterSeconds,
      description: `this key has used as many DPoP proofs as the server remembers; retry after ${full.retryAfterSeconds} s`,
    };
  }

  #remember(use: CheckedUse): void {
    this.#ledger.remember(use.jkt, use.jti, use.forgetAt);
  }

  /** The nonce to hand out first, then the previous one (still accepted for one period). */
  #currentNonces(): [string, string] {
    const now = this.#options.now();
    if (now - this.#nonce.since >= NONCE_PERIOD_MS) {
      this.#nonce = { value: freshNonce(), previous: this.#nonce.value, since: now };
    }
    return [this.#nonce.value, this.#nonce.previous];
  }

  /** The answer when the ledger cannot take the key's proof: 429 with `Retry-After`. */
  #busy(presented: PresentedCredential, full: RoomRefusal): CredentialRefusal {
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
