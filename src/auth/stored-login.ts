/** The shape of a saved login (tokens + client registration), validated with zod whenever it is read back. */
import { z } from "zod";

export const StoredTokensSchema = z.object({
  accessToken: z.string().min(1),
  tokenType: z.string().default("Bearer"),
  refreshToken: z.string().min(1).optional(),
  scope: z.string().optional(),
  /** Milliseconds since the epoch; absent when the server did not say. */
  expiresAt: z.number().optional(),
  issuedAt: z.number(),
});

/** The client registration used with the authorization server (RFC 7591 answer, pre-registered id, or metadata URL). */
export const StoredClientSchema = z.object({
  client_id: z.string().min(1),
  client_secret: z.string().optional(),
  client_secret_expires_at: z.number().optional(),
  token_endpoint_auth_method: z.string().optional(),
  redirect_uris: z.array(z.string()).default([]),
  source: z.enum(["dynamic", "pre-registered", "metadata-document"]),
});

export const StoredLoginSchema = z.object({
  version: z.literal(1),
  serverUrl: z.string(),
  /** The authorization server the client and tokens belong to; a different one discards them. */
  authorizationServerUrl: z.string(),
  /** RFC 8707 resource the tokens were issued for. */
  resource: z.string().optional(),
  client: StoredClientSchema.optional(),
  tokens: StoredTokensSchema.optional(),
  /** The scope last asked for, reused when signing in again. */
  requestedScope: z.string().optional(),
  savedAt: z.number(),
});

export type StoredTokens = z.infer<typeof StoredTokensSchema>;
export type StoredClient = z.infer<typeof StoredClientSchema>;
export type StoredLogin = z.infer<typeof StoredLoginSchema>;

/** Parses a stored JSON text; undefined (never a throw) when it is not a valid login. */
export function parseStoredLogin(text: string): StoredLogin | undefined {
  try {
    const parsed = StoredLoginSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
