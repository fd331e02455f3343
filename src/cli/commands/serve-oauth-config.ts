/** `chat-cli serve --oauth-config <file>`: pre-registered clients and what the jwt-bearer grant trusts, read from a JSON file and checked with zod. */
import * as z from "zod";
import { readSmallFile } from "../../internal/files.js";
import { UsageError } from "../../internal/usage-error.js";
import type { ReferenceServerOptions } from "../../server/index.js";
import { fieldName, fieldProblem } from "../define-command.js";

const FLAG = "--oauth-config";
/** A few clients and issuers with their keys: far below this. */
const MAX_CONFIG_BYTES = 256 * 1024;

const Jwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) });

/** The options of `startReferenceServer` a file may set, by their names there; unknown fields are typos. */
const ServeOAuthConfigSchema = z
  .object({
    oauthClients: z
      .array(
        z
          .object({
            client_id: z.string().min(1),
            client_secret: z.string().min(1).optional(),
            jwks: Jwks.optional(),
            redirect_uris: z.array(z.string()).optional(),
            client_name: z.string().optional(),
            client_credentials_account: z.string().optional(),
          })
          .strict(),
      )
      .optional(),
    trustedWorkloadIssuers: z
      .array(
        z
          .object({
            issuer: z.string().min(1),
            jwks: Jwks,
            audience: z.union([z.string(), z.array(z.string())]).optional(),
            account: z.string().min(1),
            subjects: z.array(z.string()).optional(),
          })
          .strict(),
      )
      .optional(),
    trustedEnterpriseIdps: z
      .array(z.object({ issuer: z.string().min(1), jwks: Jwks, account: z.string().min(1) }).strict())
      .optional(),
    referenceIdp: z
      .object({
        clientId: z.string().min(1),
        clientSecret: z.string().min(1).optional(),
        account: z.string().min(1),
        mcpClientId: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type ServeOAuthConfig = Pick<
  ReferenceServerOptions,
  "oauthClients" | "trustedWorkloadIssuers" | "trustedEnterpriseIdps" | "referenceIdp"
>;

/** The file's options; a file others can read is refused (it may hold client secrets). */
export function readServeOAuthConfig(path: string): ServeOAuthConfig {
  const text = readSmallFile(path, {
    flag: FLAG,
    maxBytes: MAX_CONFIG_BYTES,
    holds: "one JSON object",
    privateToUser: true,
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`${FLAG}: ${JSON.stringify(path)} is not valid JSON`);
  }
  const parsed = ServeOAuthConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`${FLAG}: ${fieldName(issue, "the file")} ${fieldProblem(issue, json)}`);
  }
  return parsed.data as ServeOAuthConfig;
}
