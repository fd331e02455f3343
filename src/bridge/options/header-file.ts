/** `--header-file <path>`: `--header`s read from a file of the person's own that no one else can read, so a secret is in neither argv (`ps`) nor a synced client config. */
import { readSmallFile } from "../../internal/files.js";
import { UsageError } from "../../internal/usage-error.js";
import { type CustomHeader, HeaderOptionError, parseHeaderOption } from "./custom-headers.js";

/** A header file holds a few lines; anything larger is not one. */
export const MAX_HEADER_FILE_BYTES = 64 * 1024;

/**
 * The headers of the file at `path`: one `Name: value` a line, `#` comments and blank lines skipped, `${ENV}`
 * expanded as `--header` does. On Linux and macOS the file must be a regular file of this user that group and
 * others can neither read nor write. Errors name the file and the line, never a value.
 */
export function readHeaderFile(
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

/**
 * The headers of the `--header` values, then of the `--header-file`s, in order; a mistake is a usage error.
 * `onMissing` is told of an unset `${ENV}` by the option's name and the variable's, never a value.
 */
export function customHeadersOf(
  values: string[],
  files: string[],
  env: Record<string, string | undefined>,
  onMissing: (where: "--header" | "--header-file", variable: string) => void,
): CustomHeader[] {
  try {
    return [
      ...values.map((raw) => parseHeaderOption(raw, env, (variable) => onMissing("--header", variable))),
      ...files.flatMap((path) =>
        readHeaderFile(path, env, (variable) => onMissing("--header-file", variable)),
      ),
    ];
  } catch (error) {
    if (error instanceof HeaderOptionError) throw new UsageError(error.message);
    throw error;
  }
}
