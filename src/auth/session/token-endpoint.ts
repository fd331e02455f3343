/** Where the SDK's token requests (code and refresh) go: the vetted endpoint, plain http included when `--allow-http` allowed it. */
import {
  type AuthorizationServerMetadata,
  assertSecureTokenEndpoint,
  type DpopSession,
  InsecureTokenEndpointError,
} from "@modelcontextprotocol/client";
import type { DiscoveredServer } from "../discovery.js";

/** What `exchangeAuthorization` and `refreshAuthorization` take to reach the token endpoint. */
export interface TokenEndpointArguments {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata | undefined;
  fetchFn: typeof fetch;
}

/**
 * The SDK refuses a token endpoint that is plain http on a host other than localhost or 127.0.0.1, and has no
 * option to allow one. Discovery already vetted the endpoint (plain http only on loopback or with `--allow-http`),
 * so such an endpoint is one the user allowed: the SDK is handed it as https, and the fetch it gets sends that one
 * URL to the http endpoint the metadata named. The SDK still builds the request and parses the answer.
 */
export function tokenEndpointArguments(
  server: DiscoveredServer,
  fetchFn: typeof fetch,
  dpop?: DpopSession,
): TokenEndpointArguments {
  const { authorizationServerUrl, metadata } = server;
  const endpoint = new URL(metadata?.token_endpoint ?? new URL("/token", authorizationServerUrl));
  if (!refusedBySdk(endpoint)) return { authorizationServerUrl, metadata, fetchFn };
  const asHttps = new URL(endpoint);
  asHttps.protocol = "https:";
  const plain = endpoint.href;
  const disguised = asHttps.href;
  return {
    // A server without metadata has its token endpoint at `/token` of this URL.
    authorizationServerUrl: metadata ? authorizationServerUrl : new URL("/", asHttps).href,
    metadata: metadata && { ...metadata, token_endpoint: disguised },
    fetchFn: (async (input: string | URL | Request, init?: RequestInit) => {
      if ((input instanceof Request ? input.url : String(input)) !== disguised) return fetchFn(input, init);
      return fetchFn(plain, dpop ? await withProofFor(plain, init, dpop) : init);
    }) as typeof fetch,
  };
}

/**
 * The SDK signed its DPoP proof for the https URL it was handed: the request to the plain http endpoint carries one
 * for that URL instead, with the same server nonce (RFC 9449 §4.3: `htu` is the URL the request goes to).
 */
async function withProofFor(
  url: string,
  init: RequestInit | undefined,
  dpop: DpopSession,
): Promise<RequestInit> {
  const headers = new Headers(init?.headers);
  const proof = headers.get("dpop");
  if (!proof) return init ?? {};
  let nonce: unknown;
  try {
    nonce = JSON.parse(Buffer.from(proof.split(".")[1] ?? "", "base64url").toString("utf8")).nonce;
  } catch {
    nonce = undefined;
  }
  headers.set(
    "dpop",
    await dpop.buildProof({ htm: "POST", htu: url, ...(typeof nonce === "string" ? { nonce } : {}) }),
  );
  return { ...init, headers };
}

function refusedBySdk(endpoint: URL): boolean {
  try {
    assertSecureTokenEndpoint(endpoint);
    return false;
  } catch (error) {
    if (error instanceof InsecureTokenEndpointError) return true;
    throw error;
  }
}
