/** The values of mcp-remote's sign-in flags, checked: `--authorize-param key=value` and `--static-oauth-client-metadata <json|@file>`. */
import { InvalidArgumentError } from "commander";
import * as z from "zod";
import { authorizeParamProblem, clientMetadataProblem } from "../../auth/session/provider-options.js";
import { readSmallFile } from "../../internal/files.js";
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
  const params: Record<string, string> = {};
  for (const value of values) {
    const equals = value.indexOf("=");
    params[value.slice(0, equals)] = value.slice(equals + 1);
  }
  return params;
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
  if (opts.clientMetadataUrl !== undefined) {
    throw new UsageError(
      "--client-credentials and --client-metadata-url are two different clients; choose one",
    );
  }
  if (keyFile === undefined && !env.CHAT_MCP_CLIENT_SECRET) {
    throw new UsageError(
      "--client-credentials needs the client's secret in $CHAT_MCP_CLIENT_SECRET or --client-private-key <pem-file>",
    );
  }
}
