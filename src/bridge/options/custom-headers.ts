/** `--header "Name: value"` options for the upstream: parsed, `${ENV}` expanded, and kept out of every log. */
import { rememberSecret, rememberSecretVariable } from "../../internal/redact.js";

export interface CustomHeader {
  name: string;
  value: string;
  /** The `--header-file` it was read from; absent for a `--header`. */
  file?: string;
}

export class HeaderOptionError extends Error {
  override readonly name = "HeaderOptionError";
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
 * Parses one `--header` value. `${NAME}` is replaced by the environment variable (empty when unset, reported
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
  if (colon <= 0) throw new HeaderOptionError(`${place} must look like "Name: value" (got no "Name:" part)`);
  const name = raw.slice(0, colon).trim();
  if (!HEADER_NAME.test(name))
    throw new HeaderOptionError(
      where
        ? `${where}: the name is not a valid HTTP header name`
        : `--header name "${name}" is not a valid HTTP header name`,
    );
  if (RESERVED.has(name.toLowerCase())) {
    throw new HeaderOptionError(`${place}: "${name}" is set by the bridge itself and cannot be overridden`);
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
    throw new HeaderOptionError(`${place}: "${name}" has a line break or NUL in its value`);
  rememberSecret(value);
  return { name, value };
}
