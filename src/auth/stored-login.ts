/** The shape of a saved login (tokens + client registration), validated whenever it is read back. */
// Hand-written, not zod: every bridge start reads a login, and zod's core alone is over half a megabyte to load.

export interface StoredTokens {
  accessToken: string;
  /** "Bearer" when the record does not say. */
  tokenType: string;
  refreshToken?: string | undefined;
  scope?: string | undefined;
  /** Milliseconds since the epoch; absent when the server did not say. */
  expiresAt?: number | undefined;
  issuedAt: number;
  /** Slug of the account or team the grant acts for, when the token response named it. */
  account?: string | undefined;
}

/** The client registration used with the authorization server (RFC 7591 answer, pre-registered id, or metadata URL). */
export interface StoredClient {
  client_id: string;
  client_secret?: string | undefined;
  client_secret_expires_at?: number | undefined;
  token_endpoint_auth_method?: string | undefined;
  /** [] when the record does not say. */
  redirect_uris: string[];
  /** The grant types it registered for, when it registered for more than the code grant (the device code grant). */
  grant_types?: string[] | undefined;
  source: "dynamic" | "pre-registered" | "metadata-document";
}

/** The login's DPoP key (RFC 9449): a P-256 private JWK, written only where the tokens are. */
export interface StoredDpopKey {
  alg: "ES256";
  privateJwk: { kty: "EC"; crv: "P-256"; x: string; y: string; d: string };
}

export interface StoredLogin {
  version: 1;
  serverUrl: string;
  /** `--profile` of this login (absent for the default one), so listings can name it. */
  profile?: string | undefined;
  /** The authorization server the client and tokens belong to; a different one discards them. */
  authorizationServerUrl: string;
  /** RFC 8707 resource the tokens were issued for. */
  resource?: string | undefined;
  client?: StoredClient | undefined;
  tokens?: StoredTokens | undefined;
  /** The scope last asked for, reused when signing in again. */
  requestedScope?: string | undefined;
  /** Present when the authorization server offers DPoP: the key the tokens are bound to (`tokens.tokenType` "DPoP"). */
  dpopKey?: StoredDpopKey | undefined;
  savedAt: number;
}

/** A stored login that does not have the expected shape; the message names the field. */
export class InvalidStoredLoginError extends Error {
  override readonly name = "InvalidStoredLoginError";
}

/** Parses a stored JSON text; undefined (never a throw) when it is not a valid login. */
export function parseStoredLogin(text: string): StoredLogin | undefined {
  try {
    return readStoredLogin(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * Validates a parsed record as a StoredLogin, as zod's `parse` would: unknown fields are dropped, absent
 * `tokenType` becomes "Bearer" and absent `redirect_uris` becomes []. Throws InvalidStoredLoginError.
 */
export function readStoredLogin(value: unknown): StoredLogin {
  return fields<StoredLogin>(value, "login", "", {
    version: (field, path) => (field === 1 ? 1 : invalid(path, "1")),
    serverUrl: string,
    profile: optional(string),
    authorizationServerUrl: string,
    resource: optional(string),
    client: optional((field, path) =>
      fields<StoredClient>(field, path, `${path}.`, {
        client_id: nonEmptyString,
        client_secret: optional(string),
        client_secret_expires_at: optional(number),
        token_endpoint_auth_method: optional(string),
        redirect_uris: (field, path) => (field === undefined ? [] : strings(field, path)),
        grant_types: optional(strings),
        source: (field, path) =>
          CLIENT_SOURCES.includes(field as StoredClient["source"])
            ? (field as StoredClient["source"])
            : invalid(path, `one of ${CLIENT_SOURCES.join(", ")}`),
      }),
    ),
    tokens: optional((field, path) =>
      fields<StoredTokens>(field, path, `${path}.`, {
        accessToken: nonEmptyString,
        tokenType: (field, path) => (field === undefined ? "Bearer" : string(field, path)),
        refreshToken: optional(nonEmptyString),
        scope: optional(string),
        expiresAt: optional(number),
        issuedAt: number,
        account: optional(string),
      }),
    ),
    requestedScope: optional(string),
    dpopKey: optional(readDpopKey),
    savedAt: number,
  });
}

const CLIENT_SOURCES: readonly StoredClient["source"][] = ["dynamic", "pre-registered", "metadata-document"];

type Read<T> = (value: unknown, path: string) => T;

/** The fields `read` names, each read at its path; absent optional ones are left out, as zod's output does. */
function fields<T>(value: unknown, path: string, prefix: string, read: { [K in keyof T]-?: Read<T[K]> }): T {
  if (typeof value !== "object" || value === null || Array.isArray(value)) invalid(path, "an object");
  const record = value as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const [key, reader] of Object.entries(read) as [string, Read<unknown>][]) {
    const field = reader(record[key], `${prefix}${key}`);
    if (field !== undefined) result[key] = field;
  }
  return result as T;
}

function readDpopKey(value: unknown, path: string): StoredDpopKey {
  return fields<StoredDpopKey>(value, path, `${path}.`, {
    alg: (field, at) => (field === "ES256" ? field : invalid(at, "ES256")),
    privateJwk: (field, at) => {
      const jwk = fields<StoredDpopKey["privateJwk"]>(field, at, `${at}.`, {
        kty: (kty) => kty as "EC",
        crv: (crv) => crv as "P-256",
        x: nonEmptyString,
        y: nonEmptyString,
        d: nonEmptyString,
      });
      return jwk.kty === "EC" && jwk.crv === "P-256" ? jwk : invalid(at, "an EC P-256 key");
    },
  });
}

function invalid(path: string, expected: string): never {
  throw new InvalidStoredLoginError(`${path}: expected ${expected}`);
}

const string: Read<string> = (value, path) => (typeof value === "string" ? value : invalid(path, "a string"));
const nonEmptyString: Read<string> = (value, path) =>
  typeof value === "string" && value.length > 0 ? value : invalid(path, "a non-empty string");
const number: Read<number> = (value, path) =>
  typeof value === "number" && Number.isFinite(value) ? value : invalid(path, "a number");
const strings: Read<string[]> = (value, path) =>
  Array.isArray(value)
    ? value.map((item, index) => string(item, `${path}.${index}`))
    : invalid(path, "an array");

function optional<T>(read: Read<T>): Read<T | undefined> {
  return (value, path) => (value === undefined ? undefined : read(value, path));
}
