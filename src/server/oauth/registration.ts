/** Client metadata (RFC 7591) as this server accepts it, from `/register` and from client ID metadata documents. */
import * as z from "zod";
import { newId, newSecret } from "../ids.js";

/** Largest registration kept, as stored JSON: names and URLs fit many times over; blobs (`jwks`, ...) do not. */
export const MAX_REGISTRATION_BYTES = 4096;
/** Largest `/register` body read. */
export const MAX_REGISTRATION_BODY_BYTES = 16 * 1024;

/** RFC 8628 §3.4: the grant type of a device code at the token endpoint. */
export const DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";
export const SUPPORTED_GRANT_TYPES = ["authorization_code", "refresh_token", DEVICE_CODE_GRANT_TYPE] as const;
/** What a client registered without `grant_types` gets (RFC 7591 §2: `authorization_code`), with refresh. */
export const DEFAULT_GRANT_TYPES = ["authorization_code", "refresh_token"] as const;
export const TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"] as const;

const text = (max: number) => z.string().max(max);
const webUrl = z
  .string()
  .max(2000)
  .refine(
    (value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol),
    "must be an http(s) URL",
  );

/**
 * The metadata fields kept; any other field is dropped (RFC 7591 §2: the server may ignore what it does not
 * support). Values the server cannot honour are refused with `invalid_client_metadata`.
 */
export const ClientMetadataSchema = z.object({
  // Required (non-empty) for the code grant only: a client of the device grant alone has nowhere to redirect to.
  redirect_uris: z.array(z.string().max(2000)).max(10).optional(),
  client_name: text(200).optional(),
  client_uri: webUrl.optional(),
  logo_uri: webUrl.optional(),
  tos_uri: webUrl.optional(),
  policy_uri: webUrl.optional(),
  contacts: z.array(text(320)).max(5).optional(),
  scope: text(1000).optional(),
  software_id: text(200).optional(),
  software_version: text(200).optional(),
  application_type: z.enum(["native", "web"]).optional(),
  grant_types: z
    .array(z.string().max(200))
    .max(10)
    .optional()
    .refine(
      (types) => types?.every((type) => (SUPPORTED_GRANT_TYPES as readonly string[]).includes(type)) ?? true,
      `grant_types may only hold ${SUPPORTED_GRANT_TYPES.join(", ")}`,
    ),
  response_types: z
    .array(z.string().max(200))
    .max(10)
    .optional()
    .refine((types) => types?.every((type) => type === "code") ?? true, "response_types may only hold code"),
  token_endpoint_auth_method: z
    .string()
    .max(200)
    .optional()
    .refine(
      (method) => method === undefined || (TOKEN_ENDPOINT_AUTH_METHODS as readonly string[]).includes(method),
      `token_endpoint_auth_method must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(", ")}`,
    ),
});
export type ClientMetadata = z.infer<typeof ClientMetadataSchema>;

/** A client as the server keeps it: its metadata with defaults filled in, and its credentials. */
export interface RegisteredClient
  extends Omit<ClientMetadata, "redirect_uris" | "grant_types" | "response_types"> {
  redirect_uris: string[];
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  client_secret_expires_at?: number;
  grant_types: string[];
  response_types: string[];
  /** `private_key_jwt` only for pre-registered clients with `jwks` (dynamic registration keeps no key sets). */
  token_endpoint_auth_method: (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number] | "private_key_jwt";
  /** Public keys of a `private_key_jwt` client. */
  jwks?: { keys: JsonWebKey[] };
  /** The account or team the `client_credentials` grant acts for (pre-registered clients only). */
  client_credentials_account?: string;
}

/** An RFC 7591 error: `invalid_client_metadata` or `invalid_redirect_uri`. */
export interface RegistrationProblem {
  error: "invalid_client_metadata" | "invalid_redirect_uri";
  error_description: string;
}

export type MetadataOutcome =
  | { ok: true; metadata: ClientMetadata }
  | { ok: false; problem: RegistrationProblem };

/** Parses and checks client metadata: known fields only, supported values, receivable redirect URIs, small. */
export function parseClientMetadata(body: unknown): MetadataOutcome {
  const parsed = ClientMetadataSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") || "body";
    const isRedirect = issue?.path[0] === "redirect_uris";
    return {
      ok: false,
      problem: {
        error: isRedirect ? "invalid_redirect_uri" : "invalid_client_metadata",
        error_description: `${field}: ${issue?.message ?? "invalid"}`,
      },
    };
  }
  const grantTypes = parsed.data.grant_types ?? DEFAULT_GRANT_TYPES;
  if (grantTypes.includes("authorization_code") && !parsed.data.redirect_uris?.length) {
    return {
      ok: false,
      problem: {
        error: "invalid_redirect_uri",
        error_description: "redirect_uris: required for the authorization_code grant",
      },
    };
  }
  for (const uri of parsed.data.redirect_uris ?? []) {
    const problem = redirectUriProblem(uri);
    if (problem) {
      return {
        ok: false,
        problem: { error: "invalid_redirect_uri", error_description: `redirect_uri ${problem}` },
      };
    }
  }
  if (JSON.stringify(parsed.data).length > MAX_REGISTRATION_BYTES) {
    return {
      ok: false,
      problem: {
        error: "invalid_client_metadata",
        error_description: `the client metadata is larger than ${MAX_REGISTRATION_BYTES} bytes`,
      },
    };
  }
  return { ok: true, metadata: parsed.data };
}

/**
 * The client a registration creates: every field answered, defaults included; a secret (and
 * `client_secret_basic`, RFC 7591's default) unless the client asked for `none` or `client_secret_post`.
 */
export function newRegisteredClient(metadata: ClientMetadata, nowMs: number): RegisteredClient {
  const method = (metadata.token_endpoint_auth_method ??
    "client_secret_basic") as RegisteredClient["token_endpoint_auth_method"];
  const issuedAt = Math.floor(nowMs / 1000);
  return {
    ...metadata,
    redirect_uris: metadata.redirect_uris ?? [],
    client_id: newId("client"),
    client_id_issued_at: issuedAt,
    grant_types: metadata.grant_types ?? [...DEFAULT_GRANT_TYPES],
    response_types: metadata.response_types ?? ["code"],
    token_endpoint_auth_method: method,
    ...(method === "none" ? {} : { client_secret: newSecret("chat_cs_"), client_secret_expires_at: 0 }),
  };
}

// Which redirect URIs a client may register and use: https, loopback http (RFC 8252) or a private-use scheme.

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
/** Schemes that can never receive a code for a client: local files, script and browser-internal pages. */
const FORBIDDEN_SCHEMES = new Set([
  "file:",
  "javascript:",
  "data:",
  "vbscript:",
  "about:",
  "blob:",
  "chrome:",
  "chrome-extension:",
  "edge:",
  "view-source:",
  "ftp:",
  "ws:",
  "wss:",
]);

/** Why `uri` is not an acceptable redirect URI, or null when it is (RFC 6749 §3.1.2, OAuth 2.1 §2.3.1, RFC 8252 §7). */
export function redirectUriProblem(uri: string): string | null {
  if (!URL.canParse(uri)) return "is not an absolute URL";
  if (uri.includes("#")) return "must not contain a fragment";
  const url = new URL(uri);
  if (url.username || url.password) return "must not contain user information";
  if (FORBIDDEN_SCHEMES.has(url.protocol))
    return `uses the ${url.protocol} scheme, which cannot receive a code`;
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:") {
    return LOOPBACK_HOSTS.has(url.hostname) ? null : "uses plain http on a host that is not loopback";
  }
  // RFC 8252 §7.1: private-use schemes are in reverse-domain form (e.g. com.example.app:/callback).
  return /^[a-z][a-z0-9+-]*\.[a-z0-9+.-]+:$/i.test(url.protocol)
    ? null
    : `uses the unknown scheme ${url.protocol}`;
}

/**
 * True when `requested` is one of `registered`: exactly, or for a loopback http URI on any port (RFC 8252 §7.3,
 * native apps bind whatever port is free), with scheme, host, path and query equal.
 */
export function redirectUriRegistered(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  if (!URL.canParse(requested)) return false;
  const wanted = new URL(requested);
  if (wanted.protocol !== "http:" || !LOOPBACK_HOSTS.has(wanted.hostname)) return false;
  return registered.some((uri) => {
    if (!URL.canParse(uri)) return false;
    const known = new URL(uri);
    known.port = "";
    const candidate = new URL(wanted.href);
    candidate.port = "";
    return known.href === candidate.href;
  });
}
