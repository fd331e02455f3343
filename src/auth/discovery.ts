/** Finds the authorization server of a protected resource (RFC 9728, then RFC 8414 / OIDC) and vets its endpoints. */
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  AuthorizationServerMetadata,
  OAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { checkResourceAllowed } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import { z } from "zod";
import { UnsafeUrlError } from "./errors.js";

export interface DiscoveredServer {
  /** The authorization server's URL as advertised (or the resource's origin for servers without RFC 9728). */
  authorizationServerUrl: string;
  /** Undefined for a legacy server without metadata: `/authorize`, `/token`, `/register` at its root are used. */
  metadata?: AuthorizationServerMetadata;
  resourceMetadata?: OAuthProtectedResourceMetadata;
  /** The RFC 8707 resource indicator, sent on authorize, token and refresh requests. */
  resource: string;
}

/** The parameters of a `WWW-Authenticate: Bearer ...` challenge that matter to a client. */
export interface BearerChallenge {
  resourceMetadataUrl?: string;
  scope?: string;
  error?: string;
}

/** Parses a `WWW-Authenticate` value (quoted strings with commas and escapes included); {} when not Bearer. */
export function parseBearerChallenge(header: string | null | undefined): BearerChallenge {
  const match = header?.match(/^\s*Bearer(?:\s+(.*))?$/is);
  if (!match) return {};
  const params: Record<string, string> = {};
  const pattern = /([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  for (const [, name, quoted, bare] of (match[1] ?? "").matchAll(pattern)) {
    params[name!.toLowerCase()] ??= quoted !== undefined ? quoted.replace(/\\(.)/g, "$1") : bare!;
  }
  return { resourceMetadataUrl: params.resource_metadata, scope: params.scope, error: params.error };
}

/** True for loopback hosts, where plain http is fine (RFC 8252 §8.3). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** Refuses anything but https, or http on loopback (or anywhere with `allowHttp`). */
export function assertSecureUrl(value: string, what: string, allowHttp = false): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UnsafeUrlError(`The ${what} is not a valid URL.`);
  }
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:") {
    if (allowHttp || isLoopbackHost(url.hostname)) return url;
    throw new UnsafeUrlError(
      `Refusing plain http for the ${what} (${url.origin}): use https, or pass --allow-http if you trust the network.`,
    );
  }
  throw new UnsafeUrlError(`Refusing the ${what}: it must be an http(s) URL, not ${url.protocol}.`);
}

function endpointsSchema(allowHttp: boolean) {
  const endpoint = (what: string) =>
    z.string().superRefine((value, ctx) => {
      try {
        assertSecureUrl(value, what, allowHttp);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
      }
    });
  return z.object({
    authorization_endpoint: endpoint("authorization endpoint"),
    token_endpoint: endpoint("token endpoint"),
    registration_endpoint: endpoint("registration endpoint").optional(),
    revocation_endpoint: endpoint("revocation endpoint").optional(),
  });
}

export interface DiscoverOptions {
  resourceMetadataUrl?: string;
  fetchFn: typeof fetch;
  allowHttp: boolean;
  log: (message: string) => void;
}

/** Discovers and validates everything needed to sign in to `serverUrl`. Throws with what failed. */
export async function discoverServer(serverUrl: string, options: DiscoverOptions): Promise<DiscoveredServer> {
  const { fetchFn, allowHttp } = options;
  const metadataUrl = options.resourceMetadataUrl
    ? assertSecureUrl(options.resourceMetadataUrl, "resource metadata URL", allowHttp)
    : undefined;
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
    metadata = await discoverAuthorizationServerMetadata(authorizationServerUrl, { fetchFn });
  } catch (error) {
    if (error instanceof z.ZodError || (error as Error).name === "ZodError") {
      const issues = (error as z.ZodError).issues;
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
  const vetted = endpointsSchema(allowHttp).safeParse(endpoints);
  if (!vetted.success) {
    throw new UnsafeUrlError(
      `The authorization server's metadata was refused: ${vetted.error.issues.map((issue) => issue.message).join(" ")}`,
    );
  }

  let resource = canonical(serverUrl);
  if (resourceMetadata) {
    if (
      !checkResourceAllowed({ requestedResource: serverUrl, configuredResource: resourceMetadata.resource })
    ) {
      throw new UnsafeUrlError(
        `The protected resource metadata names ${resourceMetadata.resource}, which does not cover ${serverUrl}; ` +
          "refusing to sign in (check the server URL).",
      );
    }
    resource = resourceMetadata.resource;
  }
  return { authorizationServerUrl, metadata, resourceMetadata, resource };
}

/**
 * The scope to ask for, as the MCP authorization spec says: the challenge's `scope`, else the resource's
 * `scopes_supported`, else none; plus any already granted (step-up asks for the union), plus `offline_access`
 * when the authorization server offers it and some scope is asked for.
 */
export function chooseScope(input: {
  challengeScope?: string;
  resourceMetadata?: OAuthProtectedResourceMetadata;
  metadata?: AuthorizationServerMetadata;
  alreadyGranted?: string;
}): string | undefined {
  const base = input.challengeScope?.trim() || input.resourceMetadata?.scopes_supported?.join(" ") || "";
  const scopes = new Set([...splitScope(input.alreadyGranted), ...splitScope(base)]);
  if (scopes.size === 0) return undefined;
  if (input.metadata?.scopes_supported?.includes("offline_access")) scopes.add("offline_access");
  return [...scopes].join(" ");
}

/** True when `granted` includes every scope of `required`. */
export function coversScope(granted: string | undefined, required: string | undefined): boolean {
  const have = new Set(splitScope(granted));
  return splitScope(required).every((scope) => have.has(scope));
}

export function splitScope(scope: string | undefined): string[] {
  return (scope ?? "").split(/\s+/).filter(Boolean);
}

function canonical(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.hash = "";
  return url.href;
}
