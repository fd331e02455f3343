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

/**
 * Validates a parsed record as a StoredLogin, with zod's `parse`/`safeParse` conventions: unknown fields are
 * dropped, absent `tokenType` becomes "Bearer" and absent `redirect_uris` becomes [].
 */
export const StoredLoginSchema = {
  parse(value: unknown): StoredLogin {
    return readLogin(value);
  },
  safeParse(
    value: unknown,
  ): { success: true; data: StoredLogin } | { success: false; error: InvalidStoredLoginError } {
    try {
      return { success: true, data: readLogin(value) };
    } catch (error) {
      if (error instanceof InvalidStoredLoginError) return { success: false, error };
      throw error;
    }
  },
};

/** Parses a stored JSON text; undefined (never a throw) when it is not a valid login. */
export function parseStoredLogin(text: string): StoredLogin | undefined {
  try {
    const parsed = StoredLoginSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const CLIENT_SOURCES: readonly StoredClient["source"][] = ["dynamic", "pre-registered", "metadata-document"];

function readLogin(value: unknown): StoredLogin {
  const record = object(value, "login");
  if (record.version !== 1) throw new InvalidStoredLoginError("version: expected 1");
  return withoutAbsent({
    version: 1,
    serverUrl: string(record.serverUrl, "serverUrl"),
    profile: optional(record.profile, (field) => string(field, "profile")),
    authorizationServerUrl: string(record.authorizationServerUrl, "authorizationServerUrl"),
    resource: optional(record.resource, (field) => string(field, "resource")),
    client: optional(record.client, readClient),
    tokens: optional(record.tokens, readTokens),
    requestedScope: optional(record.requestedScope, (field) => string(field, "requestedScope")),
    dpopKey: optional(record.dpopKey, readDpopKey),
    savedAt: number(record.savedAt, "savedAt"),
  });
}

function readTokens(value: unknown): StoredTokens {
  const record = object(value, "tokens");
  return withoutAbsent({
    accessToken: nonEmptyString(record.accessToken, "tokens.accessToken"),
    tokenType: optional(record.tokenType, (field) => string(field, "tokens.tokenType")) ?? "Bearer",
    refreshToken: optional(record.refreshToken, (field) => nonEmptyString(field, "tokens.refreshToken")),
    scope: optional(record.scope, (field) => string(field, "tokens.scope")),
    expiresAt: optional(record.expiresAt, (field) => number(field, "tokens.expiresAt")),
    issuedAt: number(record.issuedAt, "tokens.issuedAt"),
    account: optional(record.account, (field) => string(field, "tokens.account")),
  });
}

function readDpopKey(value: unknown): StoredDpopKey {
  const record = object(value, "dpopKey");
  if (record.alg !== "ES256") throw new InvalidStoredLoginError("dpopKey.alg: expected ES256");
  const jwk = object(record.privateJwk, "dpopKey.privateJwk");
  if (jwk.kty !== "EC" || jwk.crv !== "P-256") {
    throw new InvalidStoredLoginError("dpopKey.privateJwk: expected an EC P-256 key");
  }
  const member = (name: "x" | "y" | "d") => nonEmptyString(jwk[name], `dpopKey.privateJwk.${name}`);
  return {
    alg: "ES256",
    privateJwk: { kty: "EC", crv: "P-256", x: member("x"), y: member("y"), d: member("d") },
  };
}

function readClient(value: unknown): StoredClient {
  const record = object(value, "client");
  const source = record.source as StoredClient["source"];
  if (!CLIENT_SOURCES.includes(source)) {
    throw new InvalidStoredLoginError(`client.source: expected one of ${CLIENT_SOURCES.join(", ")}`);
  }
  return withoutAbsent({
    client_id: nonEmptyString(record.client_id, "client.client_id"),
    client_secret: optional(record.client_secret, (field) => string(field, "client.client_secret")),
    client_secret_expires_at: optional(record.client_secret_expires_at, (field) =>
      number(field, "client.client_secret_expires_at"),
    ),
    token_endpoint_auth_method: optional(record.token_endpoint_auth_method, (field) =>
      string(field, "client.token_endpoint_auth_method"),
    ),
    redirect_uris:
      optional(record.redirect_uris, (field) =>
        array(field, "client.redirect_uris").map((uri, index) =>
          string(uri, `client.redirect_uris.${index}`),
        ),
      ) ?? [],
    grant_types: optional(record.grant_types, (field) =>
      array(field, "client.grant_types").map((type, index) => string(type, `client.grant_types.${index}`)),
    ),
    source,
  });
}

function object(value: unknown, path: string): Record<string, unknown> {
  if (typeof value === "object" && value !== null && !Array.isArray(value))
    return value as Record<string, unknown>;
  throw new InvalidStoredLoginError(`${path}: expected an object`);
}

function array(value: unknown, path: string): unknown[] {
  if (Array.isArray(value)) return value;
  throw new InvalidStoredLoginError(`${path}: expected an array`);
}

function string(value: unknown, path: string): string {
  if (typeof value === "string") return value;
  throw new InvalidStoredLoginError(`${path}: expected a string`);
}

function nonEmptyString(value: unknown, path: string): string {
  if (typeof value === "string" && value.length > 0) return value;
  throw new InvalidStoredLoginError(`${path}: expected a non-empty string`);
}

function number(value: unknown, path: string): number {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  throw new InvalidStoredLoginError(`${path}: expected a number`);
}

function optional<T>(value: unknown, read: (value: unknown) => T): T | undefined {
  return value === undefined ? undefined : read(value);
}

/** Leaves out the optional fields the record did not have, as zod's output does. */
function withoutAbsent<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key];
  return value;
}
