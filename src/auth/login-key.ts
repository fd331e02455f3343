/** Names a stored login (server URL + resource + custom header names, never the package version) and its files, and its callback port. Cheap to import. */
import { createHash } from "node:crypto";
import { access, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** Keychain service name; the account is the login key. */
export const KEYCHAIN_SERVICE = "chat-mcp-bridge";

/** The canonical form of a server URL: parsed, without fragment (RFC 8707 §2). */
export function canonicalServerUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.hash = "";
  return url.href;
}

/** What else, beside the URL and header names, tells one login for a server from another. */
export interface LoginScope {
  /** `--profile`: a separate login for the same URL. Absent (or "default") keeps the key it always had. */
  profile?: string | undefined;
  /** `--resource`: the RFC 8707 resource asked for when it differs from the URL. */
  resource?: string | undefined;
}

/**
 * The storage key of the login for a server: a hash of the canonical URL, the RFC 8707 resource the client asks for
 * (the URL itself unless `--resource` names another; the discovered one is stored in the record and checked on use),
 * the custom header names (values never), so different header sets keep separate logins, and the profile when one
 * other than the default is named. Also names the server's log file.
 */
export function loginKey(
  serverUrl: string,
  headerNames: readonly string[] = [],
  scope: LoginScope = {},
): string {
  const server = canonicalServerUrl(serverUrl);
  const names = [...new Set(headerNames.map((name) => name.trim().toLowerCase()))].sort();
  const resource = scope.resource ? canonicalServerUrl(scope.resource) : server;
  const profile = scope.profile && scope.profile !== "default" ? { profile: scope.profile } : {};
  return createHash("sha256")
    .update(JSON.stringify({ server, resource, headers: names, ...profile }))
    .digest("hex")
    .slice(0, 32);
}

export interface LoginPaths {
  /** `<configDir>/auth`, mode 0700. */
  dir: string;
  /** The whole login (tokens + client registration) when the file store holds it, mode 0600. */
  file: string;
  /** A pointer without secrets saying which keychain backend holds the login. */
  keychainPointer: string;
  /** The cross-process lock for sign-in and refresh. */
  lock: string;
}

export function loginPaths(configDir: string, key: string): LoginPaths {
  const dir = join(configDir, "auth");
  return {
    dir,
    file: join(dir, `${key}.json`),
    keychainPointer: join(dir, `${key}.keychain.json`),
    lock: join(dir, `${key}.lock`),
  };
}

/** True when a login for this server was saved (in either store), judged from the files alone: loads no keychain. */
export async function hasStoredLogin(
  serverUrl: string,
  configDir: string,
  headerNames: readonly string[] = [],
  scope: LoginScope = {},
): Promise<boolean> {
  const paths = loginPaths(configDir, loginKey(serverUrl, headerNames, scope));
  const found = (path: string) =>
    access(path).then(
      () => true,
      () => false,
    );
  return (await found(paths.keychainPointer)) || found(paths.file);
}

/**
 * The server URLs of the logins saved under `configDir` (either store), read from the login files and keychain
 * pointers alone (no secret is read), sorted; for `logout` to say which ones exist when none matched.
 */
export async function storedLoginUrls(configDir: string): Promise<string[]> {
  const dir = loginPaths(configDir, "").dir;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const urls = new Set<string>();
  for (const name of names.filter((entry) => /^[0-9a-f]{32}(\.keychain)?\.json$/.test(entry))) {
    try {
      const { serverUrl, profile } = JSON.parse(await readFile(join(dir, name), "utf8")) as {
        serverUrl?: unknown;
        profile?: unknown;
      };
      const url = typeof serverUrl === "string" ? serverUrl : "(a keychain login saved by an older version)";
      urls.add(typeof profile === "string" && profile !== "default" ? `${url} (--profile ${profile})` : url);
    } catch {
      // Unreadable or half-written: not one to offer.
    }
  }
  return [...urls].sort();
}

/**
 * The OAuth protected resource of the REST API for a base URL: `${baseUrl}/v2`, as the server's metadata at
 * `/.well-known/oauth-protected-resource/v2` names it. `chat-cli login` signs in for it and the ChatClient reads it.
 */
export function restServerUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/v2`;
}

/** The loopback callback port a server's sign-ins prefer: stable per server URL, so a registration keeps matching. */
/** 20000-29999, from a hash of the canonical server URL. */
export function derivedCallbackPort(serverUrl: string): number {
  return 20_000 + (createHash("sha256").update(serverUrl).digest().readUInt32BE(0) % 10_000);
}
