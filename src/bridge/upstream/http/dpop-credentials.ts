/** The `Authorization` of an upstream request: Bearer, or (for a DPoP-bound login, RFC 9449 §7) the `DPoP` scheme with a fresh proof, and the server's nonces. */
import type { HttpAnswer } from "./http-exchange.js";

/** Signs DPoP proofs with the login's key and keeps each origin's newest nonce (the SDK's `DpopSession` is one). */
export interface ProofSigner {
  buildProof(request: { htm: string; htu: string; accessToken?: string }): Promise<string>;
  rememberNonce(url: string, nonce: string): void;
}

/** The headers that present `token` on a request to `url`: a new proof each time (a proof is good once). */
export async function credentialHeaders(
  token: string,
  signer: ProofSigner | undefined,
  method: string,
  url: URL,
): Promise<Record<string, string>> {
  if (!signer) return { authorization: `Bearer ${token}` };
  const proof = await signer.buildProof({ htm: method, htu: url.href, accessToken: token });
  return { authorization: `DPoP ${token}`, dpop: proof };
}

/**
 * Keeps the answer's `DPoP-Nonce` (any answer may carry a fresh one, RFC 9449 §8.2); true when the answer is the
 * resource's `use_dpop_nonce` challenge (§9), which is retried once with a proof carrying it, not a sign-in.
 */
export function askedForNonce(response: HttpAnswer, signer: ProofSigner | undefined, url: URL): boolean {
  const nonce = response.headers.get("dpop-nonce");
  if (!signer || !nonce) return false;
  signer.rememberNonce(url.href, nonce);
  return (
    response.status === 401 &&
    /\bDPoP\b.*error="use_dpop_nonce"/is.test(response.headers.get("www-authenticate") ?? "")
  );
}
