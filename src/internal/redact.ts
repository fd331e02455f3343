/** The one redaction step every error and log line crosses before anyone sees it, and the one terminal sanitiser. */

/** Environment variables that hold this package's secrets; a child process (the browser) never gets them. */
const SECRET_VARIABLES = new Set(["CHAT_API_KEY", "CHAT_MCP_CLIENT_SECRET"]);

// Values shorter than this are not replaced literally (a one-character header value would shred every message).
const MIN_SECRET_LENGTH = 6;
// Tokens rotate; the newest values are the ones still worth hiding, and the set must not grow without end.
const MAX_REMEMBERED = 256;
const remembered = new Set<string>();

/** Remembers values this process knows are secret (tokens, codes, verifiers, client secrets, header values). */
export function rememberSecret(...values: Array<string | undefined | null>): void {
  for (const value of values) {
    if (!value || value.length < MIN_SECRET_LENGTH || remembered.has(value)) continue;
    remembered.add(value);
    if (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.values().next().value as string);
  }
}

/** Names an environment variable as secret (e.g. one a `--header` value expands): kept from child processes. */
export function rememberSecretVariable(name: string, env: Record<string, string | undefined> = process.env) {
  SECRET_VARIABLES.add(name);
  rememberSecret(env[name]);
}

/** A copy of `env` without the variables that hold this package's secrets. */
export function environmentWithoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of SECRET_VARIABLES) delete copy[name];
  return copy;
}

/** The secret variables present in `env` (to clear them around a spawn that cannot take an environment). */
export function secretVariablesIn(env: NodeJS.ProcessEnv): string[] {
  return [...SECRET_VARIABLES].filter((name) => env[name] !== undefined);
}

const CREDENTIAL_NAMES =
  "access_token|refresh_token|id_token|code_verifier|code|client_secret|client_assertion|assertion|" +
  "password|token|api_key|apiKey|secret|subject_token|device_code";
// `code=...&code_verifier=...` in a form body or query echoed back by a gateway error page.
const FORM_CREDENTIAL = new RegExp(`(^|[^A-Za-z0-9_.-])(${CREDENTIAL_NAMES})=[^&\\s"'<>;,]+`, "g");
// `"refresh_token": "..."` in a JSON body.
const JSON_CREDENTIAL = new RegExp(`("(?:${CREDENTIAL_NAMES})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, "g");
// `Authorization: Bearer ...` / `Basic ...` echoed back (not a challenge's `Bearer name="value"` parameters).
const AUTHORIZATION = /\b(Bearer|Basic)\s+(?![A-Za-z0-9._~+/-]+\s*=\s*[^=\s,])[A-Za-z0-9._~+/-]{6,}=*/g;

// `scheme://user:password@host` (a proxy URL, say): the user info goes, scheme and host stay.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi;

export const REDACTED = "[redacted]";

/**
 * Removes credentials from text that is about to be shown or logged: form-encoded and JSON credential fields,
 * Authorization values, and every value remembered as secret (also URL-encoded). Only error and log paths call it.
 */
export function redact(text: string): string {
  let out = text
    .replace(FORM_CREDENTIAL, `$1$2=${REDACTED}`)
    .replace(JSON_CREDENTIAL, `$1"${REDACTED}"`)
    .replace(AUTHORIZATION, `$1 ${REDACTED}`)
    .replace(URL_USERINFO, `$1${REDACTED}@`);
  for (const secret of remembered) out = withoutValue(out, secret);
  // The secret variables' values are known to the process even before anything remembered them.
  for (const name of SECRET_VARIABLES) {
    const value = process.env[name];
    if (value && value.length >= MIN_SECRET_LENGTH) out = withoutValue(out, value);
  }
  return out;
}

function withoutValue(text: string, secret: string): string {
  let out = text.includes(secret) ? text.split(secret).join(REDACTED) : text;
  const encoded = encodeURIComponent(secret);
  if (encoded !== secret && out.includes(encoded)) out = out.split(encoded).join(REDACTED);
  return out;
}

// C0 controls but tab and newline, DEL, C1 controls, the bidirectional controls that reorder what is shown (overrides,
// isolates and the invisible marks), and the line and paragraph separators that break a line where none is seen.
const UNSAFE_FOR_TERMINAL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const UNSAFE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

function visible(char: string): string {
  const code = char.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return "^?";
  // A C1 control is ESC plus a letter in 7-bit form (U+009B CSI is ESC [), shown the same way.
  if (code <= 0x9f) return `^[${String.fromCharCode(code - 0x40)}`;
  return `<U+${code.toString(16).toUpperCase()}>`;
}

/**
 * Text from outside (a server, a file) made safe for a terminal, as gh does: every control character becomes a
 * visible caret form (`ESC` shows as `^[`), so no escape sequence, carriage return or backspace can act.
 * Newlines and tabs are kept unless `oneLine` is set (then they are controls too).
 */
export function sanitizeForTerminal(text: string, { oneLine = false } = {}): string {
  const unsafe = oneLine ? UNSAFE_IN_LINE : UNSAFE_FOR_TERMINAL;
  unsafe.lastIndex = 0;
  return unsafe.test(text) ? text.replace(unsafe, visible) : text;
}

/** Redacted, then made safe for a terminal: for error messages on stderr. */
export function redactForTerminal(text: string): string {
  return sanitizeForTerminal(redact(text));
}

/** Cuts `text` to at most `max` code points (never inside a surrogate pair), marking the cut with `…`. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  if (points.length <= max) return text;
  return `${points.slice(0, Math.max(0, max - 1)).join("")}…`;
}
