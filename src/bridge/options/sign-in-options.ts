/** The values of the bridge's sign-in flags, checked: `--authorize-param`, `--static-oauth-client-metadata`, `--client-credentials`, and the assertions instead of a person: `--workload-token-file` (workload identity) and `--idp-*` (enterprise-managed authorization). */
import { accessSync, constants } from "node:fs";
import { InvalidArgumentError } from "commander";
import * as z from "zod";
import { authorizeParamProblem, clientMetadataProblem } from "../../auth/session/provider-options.js";
import { readSmallFile } from "../../internal/files.js";
import { rememberSecretVariable } from "../../internal/redact.js";
import { UsageError } from "../../internal/usage-error.js";

const CLIENT_METADATA_FLAG = "--static-oauth-client-metadata";
/** Registration metadata is a few fields; the reference server takes 4 KiB of it. */
const MAX_CLIENT_METADATA_BYTES = 16 * 1024;

/** `--static-oauth-client-metadata`: a JSON object, inline or `@file`, that leaves the sign-in's fields alone. */
export function parseClientMetadataOption(value: string): Record<string, unknown> {
  const text = value.startsWith("@")
    ? readSmallFile(value.slice(1), {
        flag: CLIENT_METADATA_FLAG,
        maxBytes: MAX_CLIENT_METADATA_BYTES,
        holds: "one JSON object",
      })
    : value;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(
      `${CLIENT_METADATA_FLAG}: not valid JSON; give an object such as '{"client_name":"..."}'`,
    );
  }
  const parsed = z.record(z.string(), z.unknown()).safeParse(json);
  if (!parsed.success || Array.isArray(json))
    throw new UsageError(`${CLIENT_METADATA_FLAG}: expected a JSON object of client metadata (RFC 7591)`);
  const problem = clientMetadataProblem(parsed.data);
  if (problem) throw new UsageError(`${CLIENT_METADATA_FLAG}: ${problem}`);
  return parsed.data;
}

/** The `--authorize-param` values as parameters, a later value of a key replacing an earlier one. */
export function authorizeParamsOf(values: string[]): Record<string, string> | undefined {
  if (values.length === 0) return undefined;
  return Object.fromEntries(
    values.map((value) => [value.slice(0, value.indexOf("=")), value.slice(value.indexOf("=") + 1)]),
  );
}

export function collectAuthorizeParam(value: string, previous: string[]): string[] {
  const equals = value.indexOf("=");
  if (equals <= 0)
    throw new InvalidArgumentError("expected key=value, e.g. audience=https://api.example.com");
  const problem = authorizeParamProblem(value.slice(0, equals));
  if (problem) throw new InvalidArgumentError(problem);
  return [...previous, value];
}

/** `--client-credentials` needs the client and one credential; `--client-private-key` goes with it. */
export function checkClientCredentials(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  clientCredentials: boolean,
  keyFile: string | undefined,
): void {
  if (!clientCredentials) throw new UsageError("--client-private-key goes with --client-credentials");
  if (!opts.clientId) throw new UsageError("--client-credentials needs --client-id <id>");
  if (opts.clientMetadataUrl !== undefined)
    throw new UsageError(
      "--client-credentials and --client-metadata-url are two different clients; choose one",
    );
  if (keyFile === undefined && !env.CHAT_MCP_CLIENT_SECRET)
    throw new UsageError(
      "--client-credentials needs the client's secret in $CHAT_MCP_CLIENT_SECRET or --client-private-key <pem-file>",
    );
}

/** The IdP client's secret: from the environment only, never a flag. */
const IDP_CLIENT_SECRET_VARIABLE = "CHAT_MCP_IDP_CLIENT_SECRET";

export interface AssertionBridgeOptions {
  /** `--workload-token-file`: the jwt-bearer grant as `clientId` with the platform's token in this file. */
  workloadTokenFile?: string;
  /** `--idp-*`: the ID token exchanged at the IdP for an ID-JAG, redeemed as `clientId`. */
  enterpriseIdp?: { issuer: string; clientId: string; idTokenFile: string; clientSecret?: string };
}

/** The flags, checked: each goes with `--client-id`, the `--idp-*` three together, one way of signing in. */
export function assertionOptionsOf(
  opts: Record<string, unknown>,
  env: Record<string, string | undefined>,
  allowHttp: boolean,
): AssertionBridgeOptions {
  const workloadTokenFile = opts.workloadTokenFile as string | undefined;
  const issuer = opts.idpIssuer as string | undefined;
  const idpClientId = opts.idpClientId as string | undefined;
  const idTokenFile = opts.idpIdTokenFile as string | undefined;
  const anyIdp = issuer !== undefined || idpClientId !== undefined || idTokenFile !== undefined;
  if (workloadTokenFile === undefined && !anyIdp) return {};
  const flag = workloadTokenFile !== undefined ? "--workload-token-file" : "--idp-issuer";
  if (workloadTokenFile !== undefined && anyIdp)
    throw new UsageError(
      "--workload-token-file and the --idp-* flags are two ways of signing in; choose one",
    );
  if (opts.clientCredentials === true)
    throw new UsageError(`${flag} and --client-credentials are two ways of signing in; choose one`);
  if (opts.deviceCode === true)
    throw new UsageError(`${flag} and --device-code are two ways of signing in; choose one`);
  if (!opts.clientId)
    throw new UsageError(`${flag} needs --client-id <id> (the client registered at the server)`);
  if (opts.clientMetadataUrl !== undefined)
    throw new UsageError(`${flag} and --client-metadata-url are two different clients; choose one`);
  if (workloadTokenFile !== undefined) {
    readable(workloadTokenFile, "--workload-token-file");
    return { workloadTokenFile };
  }
  if (issuer === undefined || idpClientId === undefined || idTokenFile === undefined)
    throw new UsageError(
      "enterprise-managed sign-in needs --idp-issuer, --idp-client-id and --idp-id-token-file together",
    );
  const url = URL.parse(issuer);
  const loopback = url && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (!url || !(url.protocol === "https:" || (url.protocol === "http:" && (loopback || allowHttp))))
    throw new UsageError(
      "--idp-issuer must be an https URL (plain http only on loopback or with --allow-http)",
    );
  readable(idTokenFile, "--idp-id-token-file");
  rememberSecretVariable(IDP_CLIENT_SECRET_VARIABLE, env);
  const clientSecret = env[IDP_CLIENT_SECRET_VARIABLE] || undefined;
  return {
    enterpriseIdp: { issuer, clientId: idpClientId, idTokenFile, ...(clientSecret ? { clientSecret } : {}) },
  };
}

/** A token file that cannot be read is a mistake in the command: said before anything starts. */
function readable(path: string, flag: string): void {
  try {
    accessSync(path, constants.R_OK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(
      `${flag} ${path} cannot be read (${typeof code === "string" ? code : "unreadable"})`,
    );
  }
}
