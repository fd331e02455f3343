/** `--header "Name: value"` and `--header-file` options for the upstream: parsed, `${ENV}` expanded, and kept out of every log. */
import { readSmallFile } from "../../internal/files.js";
import { rememberSecret, rememberSecretVariable } from "../../internal/redact.js";
import { UsageError } from "../../internal/usage-error.js";

export interface CustomHeader {
  name: string;
  value: string;
  /** The `--header-file` it was read from; absent for a `--header`. */
  file?: string;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** Headers the transport owns; letting users set them would break the session. */
const RESERVED = new Set([
  "content-type",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "content-length",
  "host",
]);

/**
 * Parses one `--header` value (a mistake is a usage error). `${NAME}` is replaced by the environment variable (empty when unset, reported
 * through `onMissing` by name only, since the value is a secret). `where` names a header file's line instead of
 * `--header` in errors; those never quote a line's text, which may be all secret.
 */
export function parseHeaderOption(
  raw: string,
  env: Record<string, string | undefined> = process.env,
  onMissing: (variable: string) => void = () => {},
  where?: string,
): CustomHeader {
  const place = where ?? "--header";
  const colon = raw.indexOf(":");
  if (colon <= 0) throw new UsageError(`${place} must look like "Name: value" (got no "Name:" part)`);
  const name = raw.slice(0, colon).trim();
  if (!HEADER_NAME.test(name))
    throw new UsageError(
      where
        ? `${where}: the name is not a valid HTTP header name`
        : `--header name "${name}" is not a valid HTTP header name`,
    );
  if (RESERVED.has(name.toLowerCase())) {
    throw new UsageError(`${place}: "${name}" is set by the bridge itself and cannot be overridden`);
  }
  const value = raw
    .slice(colon + 1)
    .trim()
    .replace(ENV_REFERENCE, (_match, variable: string) => {
      // The variable holds a secret: redacted from messages, and kept from the browser's environment.
      rememberSecretVariable(variable, env);
      const found = env[variable];
      if (found === undefined) onMissing(variable);
      return found ?? "";
    });
  if (/[\r\n\0]/.test(value))
    throw new UsageError(`${place}: "${name}" has a line break or NUL in its value`);
  rememberSecret(value);
  return { name, value };
}

/** A header file holds a few lines; anything larger is not one. */
const MAX_HEADER_FILE_BYTES = 64 * 1024;

/**
 * The headers of the file at `path`: one `Name: value` a line, `#` comments and blank lines skipped, `${ENV}`
 * expanded as `--header` does. On Linux and macOS the file must be a regular file of this user that group and
 * others can neither read nor write. Errors name the file and the line, never a value.
 */
function readHeaderFile(
  path: string,
  env: Record<string, string | undefined> = process.env,
  onMissing: (variable: string) => void = () => {},
): CustomHeader[] {
  const text = readSmallFile(path, {
    flag: "--header-file",
    maxBytes: MAX_HEADER_FILE_BYTES,
    holds: '"Name: value" lines',
    privateToUser: true,
  });
  const headers: CustomHeader[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const where = `--header-file ${JSON.stringify(path)}, line ${index + 1}`;
    headers.push({ ...parseHeaderOption(trimmed, env, onMissing, where), file: path });
  }
  return headers;
}

/** The headers of the `--header` values, then of the `--header-file`s, in order; a mistake is a usage error. */
export function customHeadersOf(
  values: string[],
  files: string[],
  env: Record<string, string | undefined>,
  onMissing: (where: "--header" | "--header-file", variable: string) => void,
): CustomHeader[] {
  return [
    ...values.map((raw) => parseHeaderOption(raw, env, (variable) => onMissing("--header", variable))),
    ...files.flatMap((path) => readHeaderFile(path, env, (variable) => onMissing("--header-file", variable))),
  ];
}
