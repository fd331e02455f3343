/** Finds the authorization server of a protected resource (RFC 9728, then RFC 8414 / OIDC) and vets its endpoints. */
import {
  type AuthorizationServerMetadata,
  checkResourceAllowed,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  type OAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/client";
import { readBoundedBytes } from "../internal/bounded-body.js";
import { assertSecureUrl } from "./checks.js";
import { UnsafeUrlError } from "./errors.js";
import { canonicalServerUrl } from "./login-key.js";

export interface DiscoveredServer {
  /** The authorization server's URL as advertised (or the resource's origin for servers without RFC 9728). */
  authorizationServerUrl: string;
  /** Undefined for a legacy server without metadata: `/authorize`, `/token`, `/register` at its root are used. */
  metadata?: AuthorizationServerMetadata;
  /**
   * The issuer every authorization answer is held to (RFC 9207): the metadata's `issuer`, else, for a 2025-03-26
   * server without metadata, the origin the bridge sends its `/authorize` and `/token` requests to.
   */
  issuer: string;
  resourceMetadata?: OAuthProtectedResourceMetadata;
  /** The RFC 8707 resource indicator, sent on authorize, token and refresh requests. */
  resource: string;
}

/** The endpoints of authorization server metadata that requests go to. */
interface Endpoints {
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint?: string | undefined;
  revocation_endpoint?: string | undefined;
}

export interface DiscoverOptions {
  resourceMetadataUrl?: string;
  /** `--resource`: the protected resource to ask for instead of `serverUrl` (it must still match the metadata). */
  resource?: string | undefined;
  fetchFn: typeof fetch;
  allowHttp: boolean;
  log: (message: string) => void;
  /** How long one metadata request may take, its body included (default METADATA_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Ends every metadata request when it aborts: the deadline of the sign-in that asks (`--auth-timeout`). */
  signal?: AbortSignal | undefined;
}

/** The most of one metadata document read: real ones are a few KiB, and a 700 MB one must cost nothing. */
export const MAX_METADATA_BYTES = 256 * 1024;
/** How long one metadata request may take, answer and body: a server that never answers must not hold the sign-in lock. */
export const METADATA_TIMEOUT_MS = 10_000;

/**
 * `fetchFn` for metadata: each request fails after `timeoutMs` (its body included), or when `deadline` aborts
 * first, and a body over `maxBytes` is refused as it arrives, its rest never read. The answer handed on holds the
 * bytes read, so the SDK's parsers see a complete, small body.
 */
export function boundedMetadataFetch(
  fetchFn: typeof fetch,
  timeoutMs = METADATA_TIMEOUT_MS,
  maxBytes = MAX_METADATA_BYTES,
  deadline?: AbortSignal,
): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const timeout = AbortSignal.timeout(timeoutMs);
    const signals = [init?.signal, timeout, deadline].filter((signal) => signal != null);
    const signal = AbortSignal.any(signals);
    try {
      const response = await fetchFn(input, { ...init, signal });
      const bytes = await readBoundedBytes(response, { maxBytes, what: `the metadata at ${url}` });
      const empty = response.status === 204 || response.status === 304;
      return new Response(empty ? null : bytes, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } catch (error) {
      if (timeout.aborted) throw new Error(`no answer from ${url} within ${timeoutMs / 1000} s`);
      if (deadline?.aborted) throw new Error(`no answer from ${url} before the sign-in's time ran out`);
      throw error;
    }
  }) as typeof fetch;
}

/** Discovers and validates everything needed to sign in to `serverUrl`. Throws with what failed. */
export async function discoverServer(serverUrl: string, options: DiscoverOptions): Promise<DiscoveredServer> {
  const { allowHttp } = options;
  const fetchFn = boundedMetadataFetch(options.fetchFn, options.timeoutMs, undefined, options.signal);
  const metadataUrl = sameOriginMetadataUrl(serverUrl, options);
  let resourceMetadata: OAuthProtectedResourceMetadata | undefined;
  try {
    resourceMetadata = await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      { resourceMetadataUrl: metadataUrl },
      fetchFn,
    );
  } catch (error) {
    options.log(
      `No usable protected resource metadata (${(error as Error).message}); using the server's origin.`,
    );
  }
  const advertised = resourceMetadata?.authorization_servers?.[0];
  const authorizationServerUrl = advertised ?? new URL("/", serverUrl).href;
  assertSecureUrl(authorizationServerUrl, "authorization server URL", allowHttp);

  let metadata: AuthorizationServerMetadata | undefined;
  try {
    // The issuer is held to the URL below (assertIssuerAndOrigins), with the 2025-03-26 origin rule the SDK lacks.
    metadata = await discoverAuthorizationServerMetadata(authorizationServerUrl, {
      fetchFn,
      skipIssuerValidation: true,
    });
  } catch (error) {
    if ((error as Error).name === "ZodError") {
      const issues = (error as { issues: { path: (string | number)[]; message: string }[] }).issues;
      const detail = issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
      throw new UnsafeUrlError(
        `The authorization server metadata of ${authorizationServerUrl} was refused (${detail}).`,
      );
    }
    throw new Error(
      `Could not load the authorization server metadata of ${authorizationServerUrl}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const endpoints = metadata ?? {
    authorization_endpoint: new URL("/authorize", authorizationServerUrl).href,
    token_endpoint: new URL("/token", authorizationServerUrl).href,
    registration_endpoint: new URL("/register", authorizationServerUrl).href,
  };
  const refused = (["authorization", "token", "registration", "revocation"] as const).flatMap((name) => {
    const value = (endpoints as Endpoints)[`${name}_endpoint`];
    try {
      if (value !== undefined) assertSecureUrl(value, `${name} endpoint`, allowHttp);
      return [];
    } catch (error) {
      return [(error as Error).message];
    }
  });
  if (refused.length > 0)
    throw new UnsafeUrlError(`The authorization server's metadata was refused: ${refused.join(" ")}`);
  if (metadata) {
    assertIssuerAndOrigins(
      metadata.issuer,
      endpoints,
      authorizationServerUrl,
      resourceMetadata === undefined,
    );
  }

  const requested = options.resource ?? serverUrl;
  let resource = canonicalServerUrl(requested);
  if (resourceMetadata) {
    if (
      !checkResourceAllowed({ requestedResource: requested, configuredResource: resourceMetadata.resource })
    ) {
      throw new UnsafeUrlError(
        `The protected resource metadata names ${resourceMetadata.resource}, which does not cover ${requested}; ` +
          `refusing to sign in (check the server URL${options.resource ? " and --resource" : ""}).`,
      );
    }
    resource = resourceMetadata.resource;
  }
  const issuer = metadata?.issuer ?? new URL(authorizationServerUrl).origin;
  return { authorizationServerUrl, metadata, issuer, resourceMetadata, resource };
}

/**
 * RFC 9207 §2.4: whether an authorization answer's `iss` names the issuer this sign-in asked. Present, it must
 * be that issuer on every path, the 2025-03-26 one without metadata included (there the origin asked, so a
 * server that forwards the browser to another authorization server cannot hand its answer back); absent, it is
 * accepted only from an authorization server that did not promise to send it.
 */
export function isExpectedIssuer(server: DiscoveredServer, iss: string | undefined): boolean {
  if (iss === undefined) return server.metadata?.authorization_response_iss_parameter_supported !== true;
  // A simple string comparison (RFC 9207 §2.4); without metadata the origin may be written with its slash.
  if (server.metadata) return iss === server.metadata.issuer;
  return withoutTrailingSlash(iss) === server.issuer;
}

/**
 * RFC 8414 §3.3: the metadata's `issuer` must be the authorization server URL it was fetched for (a trailing
 * slash aside). A 2025-03-26 server without protected resource metadata names no issuer for the client to hold
 * the metadata to (its spec only derives where to fetch it from the MCP server's origin), so there the issuer
 * only has to be on that origin. The code, the PKCE verifier and the client's credentials go to the token,
 * registration and revocation endpoints: each must be on the issuer's origin. The authorization endpoint only
 * gets what the browser shows, and passes the http(s) checks alone.
 */
function assertIssuerAndOrigins(
  issuerValue: string,
  endpoints: Endpoints,
  authorizationServerUrl: string,
  withoutResourceMetadata: boolean,
): void {
  const refuse = (reason: string) =>
    new UnsafeUrlError(
      `The authorization server metadata of ${authorizationServerUrl} was refused: ${reason}; not signing in there.`,
    );
  let issuer: URL;
  try {
    issuer = new URL(issuerValue);
  } catch {
    throw refuse("its issuer is not a valid URL");
  }
  const expected = new URL(authorizationServerUrl);
  // A simple string comparison (the well-known URL drops a trailing slash of the issuer it was built from).
  const matches = withoutResourceMetadata
    ? issuer.origin === expected.origin
    : withoutTrailingSlash(issuerValue) === withoutTrailingSlash(authorizationServerUrl);
  if (!matches) {
    const relation = withoutResourceMetadata ? "on the origin of" : "the URL of";
    throw refuse(
      `its issuer ${JSON.stringify(issuerValue)} is not ${relation} the authorization server (RFC 8414 §3.3)`,
    );
  }
  const mustShareOrigin: Array<[string, string | undefined]> = [
    ["token endpoint", endpoints.token_endpoint],
    ["registration endpoint", endpoints.registration_endpoint],
    ["revocation endpoint", endpoints.revocation_endpoint],
  ];
  for (const [what, value] of mustShareOrigin) {
    if (value !== undefined && new URL(value).origin !== issuer.origin) {
      throw refuse(`its ${what} ${new URL(value).origin} is not on the issuer's origin ${issuer.origin}`);
    }
  }
}

function withoutTrailingSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}

/**
 * The `resource_metadata` URL of a challenge, when it is on the server's own origin. The MCP spec (2025-11-25)
 * says to use it when present, and RFC 9728 allows any origin; the bridge narrows that: a server cannot make it
 * fetch another origin (an intranet address, another service), so a foreign one is ignored for the well-known
 * URIs on the server's origin, which RFC 9728 section 3 defines for every resource.
 */
function sameOriginMetadataUrl(serverUrl: string, options: DiscoverOptions): URL | undefined {
  if (!options.resourceMetadataUrl) return undefined;
  const url = assertSecureUrl(options.resourceMetadataUrl, "resource metadata URL", options.allowHttp);
  if (url.origin === new URL(serverUrl).origin) return url;
  options.log(
    `Ignoring resource_metadata on another origin (${url.origin}); asking ${new URL(serverUrl).origin} instead.`,
  );
  return undefined;
}
