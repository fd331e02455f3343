/** DPoP (RFC 9449) on the reference server: proofs at the token endpoint, tokens bound by `cnf.jkt`, proofs checked on `/mcp` and `/v2`, nonces and replay. */
import { randomBytes } from "node:crypto";
import type { CredentialCheck, CredentialRefusal, PresentedCredential, Principal } from "../context.js";
import type { DpopMode, DpopNonceMode } from "../options.js";
import type { DpopBindings } from "./dpop-bindings.js";
import { checkDpopProof, DPOP_ALGORITHMS, DpopProofError } from "./dpop-proof.js";
import { REFRESH_TOKEN_TTL_MS } from "./grants.js";
import { OAuthError, type TokenResponseBody } from "./provider.js";
import type { RegisteredClient } from "./registration.js";

export { DPOP_ALGORITHMS } from "./dpop-proof.js";

/** How old a proof's `iat` may be, and how far ahead (a client's clock may run a little fast). */
const MAX_PROOF_AGE_SECONDS = 300;
const MAX_PROOF_FUTURE_SECONDS = 60;
/** A server nonce is good for one period after the one it was issued in. */
const NONCE_PERIOD_MS = 5 * 60 * 1000;
/** Most proof `jti`s remembered; each is kept only while its `iat` is in the window, then forgotten. */
const MAX_REMEMBERED_PROOFS = 100_000;

export interface DpopPolicyOptions {
  mode: DpopMode;
  nonces: DpopNonceMode;
  bindings: DpopBindings;
  tokenEndpoint: string;
  now: () => number;
}

export class DpopPolicy {
  readonly #options: DpopPolicyOptions;
  /** `${jkt}.${jti}` of each proof accepted, with the time (s) it may be forgotten. */
  readonly #seen = new Map<string, number>();
  #nonce = { value: freshNonce(), previous: freshNonce(), since: 0 };

  constructor(options: DpopPolicyOptions) {
    this.#options = options;
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
  tokenRequestKey(request: Request, form: URLSearchParams): string | undefined {
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
      const jkt = this.#check(proof, {
        method: request.method,
        url: this.#options.tokenEndpoint,
        nonce: this.#options.nonces !== "off",
      });
      if (boundTo && boundTo !== jkt) {
        throw new DpopProofError("invalid_dpop_proof", "The refresh token is bound to another key");
      }
      return jkt;
    } catch (error) {
      if (error instanceof DpopProofError) throw new OAuthError(error.error, error.description);
      throw error;
    }
  }

  /** The token response with its tokens bound to `jkt` (refresh tokens only for public clients, RFC 9449 §5). */
  bind(body: TokenResponseBody, jkt: string | undefined, client: RegisteredClient): TokenResponseBody {
    if (!jkt) return body;
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

  /** The rule of `/mcp` and `/v2`: a bound token only with the `DPoP` scheme and a proof by its key. */
  readonly checkCredential: CredentialCheck = (presented) => {
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
      this.#check(presented.proof, {
        method: presented.method,
        url: presented.url,
        accessToken: presented.token,
        nonce: this.#options.nonces === "everywhere",
        boundTo: principal.jkt,
      });
      return undefined;
    } catch (error) {
      if (error instanceof DpopProofError) return this.#refusal(presented, error.error, error.description);
      throw error;
    }
  };

  /** Checks a proof and remembers its `jti` (after every other check, so a refused proof takes no room). */
  #check(
    proof: string,
    expected: { method: string; url: string; accessToken?: string; nonce: boolean; boundTo?: string },
  ): string {
    const nowSeconds = this.#options.now() / 1000;
    const checked = checkDpopProof(proof, {
      method: expected.method,
      url: expected.url,
      ...(expected.accessToken !== undefined ? { accessToken: expected.accessToken } : {}),
      nowSeconds,
      maxAgeSeconds: MAX_PROOF_AGE_SECONDS,
      maxFutureSeconds: MAX_PROOF_FUTURE_SECONDS,
      ...(expected.nonce ? { acceptedNonces: this.#currentNonces() } : {}),
    });
    if (expected.boundTo !== undefined && checked.jkt !== expected.boundTo) {
      throw new DpopProofError(
        "invalid_dpop_proof",
        "The proof is signed by another key than the token is bound to",
      );
    }
    const key = `${checked.jkt}.${checked.jti}`;
    if (this.#seen.has(key))
      throw new DpopProofError("invalid_dpop_proof", "This DPoP proof was already used");
    this.#remember(key, checked.iat + MAX_PROOF_AGE_SECONDS + MAX_PROOF_FUTURE_SECONDS, nowSeconds);
    return checked.jkt;
  }

  #remember(key: string, forgetAt: number, nowSeconds: number): void {
    if (this.#seen.size >= MAX_REMEMBERED_PROOFS) {
      for (const [seen, until] of this.#seen) if (until <= nowSeconds) this.#seen.delete(seen);
      // Still full of live proofs: the oldest go first (a replay of those fails on its iat soon anyway).
      for (const seen of this.#seen.keys()) {
        if (this.#seen.size < MAX_REMEMBERED_PROOFS) break;
        this.#seen.delete(seen);
      }
    }
    this.#seen.set(key, forgetAt);
  }

  /** The nonce to hand out first, then the previous one (still accepted for one period). */
  #currentNonces(): [string, string] {
    const now = this.#options.now();
    if (now - this.#nonce.since >= NONCE_PERIOD_MS) {
      this.#nonce = { value: freshNonce(), previous: this.#nonce.value, since: now };
    }
    return [this.#nonce.value, this.#nonce.previous];
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
