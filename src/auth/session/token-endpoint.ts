/** The SDK's token requests: where they go (the vetted endpoint, plain http when `--allow-http` allowed it), the account their answer names, and the client's authentication beside them. */
import {
  type AuthorizationServerMetadata,
  assertSecureTokenEndpoint,
  type DpopSession,
  InsecureTokenEndpointError,
  type OAuthTokens,
  selectClientAuthMethod,
} from "@modelcontextprotocol/client";
import { readBoundedText } from "../../internal/bounded-body.js";
import type { DiscoveredServer } from "../discovery.js";
import { dpopSessionOf } from "../dpop.js";
import type { StoredClient, StoredDpopKey } from "../stored-login.js";

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

/** One token request at the vetted endpoint (`request` makes it with the SDK), DPoP-bound with `dpopKey`, and the account its answer names. */
export async function requestTokens(
  server: DiscoveredServer,
  fetchFn: typeof fetch,
  dpopKey: StoredDpopKey | undefined,
  request: (endpoint: TokenEndpointArguments, dpop: DpopSession | undefined) => Promise<OAuthTokens>,
): Promise<{ tokens: OAuthTokens; account: string | undefined }> {
  const answer = accountRecordingFetch(fetchFn);
  const dpop = dpopKey ? await dpopSessionOf(dpopKey) : undefined;
  const tokens = await request(tokenEndpointArguments(server, answer.fetchFn, dpop), dpop);
  return { tokens, account: answer.account() };
}

/** Authenticates a request beside the token endpoint's (device authorization, revocation) as the SDK would the token request. */
export function authenticateClient(
  client: StoredClient,
  supportedMethods: string[],
  headers: Headers,
  form: URLSearchParams,
): void {
  const method = selectClientAuthMethod(client, supportedMethods);
  if (method === "client_secret_basic" && client.client_secret) {
    // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
    const pair = `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`;
    headers.set("authorization", `Basic ${Buffer.from(pair).toString("base64")}`);
    return;
  }
  form.set("client_id", client.client_id);
  if (method === "client_secret_post" && client.client_secret)
    form.set("client_secret", client.client_secret);
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

// A token response may name the account or team in an extra `account` parameter (RFC 6749 §5.1), which the SDK's
// parsing drops: it is read beside it.
/** A slug as the chat service spells them; anything else is ignored rather than stored or shown. */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** A token response is a few hundred bytes; a bigger body is not read past this. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * Wraps the fetch of one token request (code exchange or refresh) so the `account` of its successful JSON
 * answer can be read afterwards; the SDK still reads and validates the answer itself.
 */
export function accountRecordingFetch(fetchFn: typeof fetch): {
  fetchFn: typeof fetch;
  account: () => string | undefined;
} {
  let account: string | undefined;
  const recording = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const response = await fetchFn(input, init);
    if (response.ok) {
      const text = readBoundedText(response.clone(), {
        maxBytes: MAX_BODY_BYTES,
        what: "the token response",
      });
      account = accountOf(await text.catch(() => undefined));
    }
    return response;
  };
  return { fetchFn: recording as typeof fetch, account: () => account };
}

function accountOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const body: unknown = JSON.parse(text);
    const value =
      typeof body === "object" && body !== null ? (body as { account?: unknown }).account : undefined;
    return typeof value === "string" && SLUG.test(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
