/** Checks with no dependencies, cheap enough for every start: safe URLs, Bearer challenges, scope sets. */
import { UnsafeUrlError } from "./errors.js";

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
  const url = URL.parse(value);
  if (!url) throw new UnsafeUrlError(`The ${what} is not a valid URL.`);
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:") {
    if (allowHttp || isLoopbackHost(url.hostname)) return url;
    throw new UnsafeUrlError(
      `Refusing plain http for the ${what} (${url.origin}): use https, or pass --allow-http if you trust the network.`,
    );
  }
  throw new UnsafeUrlError(`Refusing the ${what}: it must be an http(s) URL, not ${url.protocol}.`);
}

/** An https URL with a path, as a client ID metadata document URL must be (the SDK's `isHttpsUrl` rule). */
export function isHttpsUrlWithPath(value: string): boolean {
  const url = URL.parse(value);
  return url?.protocol === "https:" && url.pathname !== "/";
}

/** True when `granted` includes every scope of `required`. */
export function coversScope(granted: string | undefined, required: string | undefined): boolean {
  const have = new Set(splitScope(granted));
  return splitScope(required).every((scope) => have.has(scope));
}

export function splitScope(scope: string | undefined): string[] {
  return (scope ?? "").split(/\s+/).filter(Boolean);
}

/** The device authorization endpoint (RFC 8628 §4) that authorization server metadata names, if any. */
export function deviceAuthorizationEndpoint(metadata: object | undefined): string | undefined {
  const endpoint = (metadata as { device_authorization_endpoint?: unknown } | undefined)
    ?.device_authorization_endpoint;
  return typeof endpoint === "string" ? endpoint : undefined;
}
