/** The one redaction step every error and log line crosses before anyone sees it, and the one terminal sanitiser. */
import { envVar } from "./env.js";

/** Environment variables that hold this package's secrets; a child process (the browser) never gets them. */
const SECRET_VARIABLES = new Set(["CHAT_API_KEY", "CHAT_MCP_CLIENT_SECRET", "CHAT_MCP_IDP_CLIENT_SECRET"]);

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
  "access_token|refresh_token|id_token|code_verifier|client_secret|client_assertion|assertion|" +
  "password|token|api_key|apiKey|secret|subject_token|device_code";
// `code=...&code_verifier=...` in a form body or query echoed back by a gateway error page: there `code` is an
// authorization code.
const FORM_CREDENTIAL = new RegExp(`(^|[^A-Za-z0-9_.-])(code|${CREDENTIAL_NAMES})=[^&\\s"'<>;,]+`, "g");
// `"refresh_token": "..."` in a JSON body. A JSON `"code"` is an error code (`"not_found"`), kept readable.
const JSON_CREDENTIAL = new RegExp(`("(?:${CREDENTIAL_NAMES})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, "g");
// `Authorization: Bearer ...` / `Basic ...` echoed back (not a challenge's `Bearer name="value"` parameters).
const AUTHORIZATION = /\b(Bearer|Basic)\s+(?![A-Za-z0-9._~+/-]+\s*=\s*[^=\s,])[A-Za-z0-9._~+/-]{6,}=*/g;

// `scheme://user:password@host` (a proxy URL, say): the user info goes, scheme and host stay.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi;

export const REDACTED = "[redacted]";

/** Removes credentials (form and JSON credential fields, Authorization values, every remembered secret) from text to show or log. */
export function redact(text: string): string {
  let out = text
    .replace(FORM_CREDENTIAL, `$1$2=${REDACTED}`)
    .replace(JSON_CREDENTIAL, `$1"${REDACTED}"`)
    .replace(AUTHORIZATION, `$1 ${REDACTED}`)
    .replace(URL_USERINFO, `$1${REDACTED}@`);
  for (const secret of remembered) out = withoutValue(out, secret);
  // The secret variables' values are known to the process even before anything remembered them.
  for (const name of SECRET_VARIABLES) {
    const value = envVar(name);
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

// Runs of what a terminal or a dialog does not show as text: C0 controls but tab and newline, DEL, C1 controls,
// U+2028 and U+2029, every format character (bidi controls, zero-width characters, the tag characters that can spell
// a hidden sentence) and every other default-ignorable code point (variation selectors, the soft hyphen, ...).
const HIDDEN_FOR_TERMINAL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\p{Cf}\p{Default_Ignorable_Code_Point}]+/gu;
const HIDDEN_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}\p{Default_Ignorable_Code_Point}]+/gu;

/** True when a one-line display would not show `text` as itself (newline and tab included): for values refused, not escaped. */
export function hasHiddenCharacters(text: string): boolean {
  HIDDEN_IN_LINE.lastIndex = 0;
  const found = HIDDEN_IN_LINE.test(text);
  HIDDEN_IN_LINE.lastIndex = 0;
  return found;
}

const EMOJI = /^\p{Emoji}$/u;
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
const JOINED_EMOJI = /^[\p{Extended_Pictographic}\p{Emoji_Modifier}]$/u;
const HAN = /^\p{Script=Han}$/u;
const NON_ASCII_LETTER_OR_MARK = /^[^\p{ASCII}](?<=[\p{L}\p{M}])$/u;
const VARIATION_SELECTOR = /^[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]$/u;
const BLACK_FLAG = 0x1f3f4;
const KEYCAP = 0x20e3;
/** The subdivision flags of Unicode's recommended emoji (England, Scotland, Wales): the black flag, tags, cancel tag. */
const FLAG_TAGS = new Set(
  ["gbeng", "gbsct", "gbwls"].map(
    (code) => `${String.fromCodePoint(...[...code].map((char) => 0xe0000 + char.charCodeAt(0)))}\u{E007F}`,
  ),
);

const is = (pattern: RegExp, codePoint: number | undefined) =>
  codePoint !== undefined && pattern.test(String.fromCodePoint(codePoint));

/**
 * Whether a run of invisible code points is ordinary text: one presentation selector after an emoji, one ZWJ between
 * emoji (👨‍👩‍👧, 🏳️‍🌈), one variation selector after a Han ideograph, one ZWJ or ZWNJ inside a word of a script
 * that needs it (Persian, Hindi), a subdivision flag's tags. Anything else hides something and is shown.
 */
function isOrdinaryInvisible(run: string, before: number | undefined, after: number | undefined): boolean {
  if (run === "\uFE0E" || run === "\uFE0F") return isEmojiBase(before, after) || is(HAN, before);
  if (run === "\u200D" || run === "\uFE0F\u200D")
    return (is(JOINED_EMOJI, before) && is(PICTOGRAPH, after)) || (run === "\u200D" && inWord(before, after));
  if (run === "\u200C") return inWord(before, after);
  if (VARIATION_SELECTOR.test(run)) return is(HAN, before);
  return before === BLACK_FLAG && FLAG_TAGS.has(run);
}

/** An emoji a presentation selector may follow: digits, `#` and `*` only as keycaps (1️⃣ is 1, VS16, U+20E3). */
const isEmojiBase = (before: number | undefined, after: number | undefined) =>
  is(EMOJI, before) && (before === undefined || before > 0x7f || after === KEYCAP);

const inWord = (before: number | undefined, after: number | undefined) =>
  is(NON_ASCII_LETTER_OR_MARK, before) && is(NON_ASCII_LETTER_OR_MARK, after);

function codePointBefore(text: string, index: number): number | undefined {
  return Array.from(text.slice(Math.max(0, index - 2), index))
    .at(-1)
    ?.codePointAt(0);
}

function visible(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return "^?";
  // A C1 control is ESC plus a letter in 7-bit form (U+009B CSI is ESC [), shown the same way.
  if (code <= 0x9f) return `^[${String.fromCharCode(code - 0x40)}`;
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

/**
 * Text from outside made safe for a terminal or a dialog, as gh does: every control character in a caret form (`ESC`
 * is `^[`), so none can act, and every invisible one as `<U+XXXX>`, so nothing hides between the letters (emoji and
 * scripts keep their joiners). Newlines and tabs are kept unless `oneLine`.
 */
export function sanitizeForTerminal(text: string, { oneLine = false } = {}): string {
  const hidden = oneLine ? HIDDEN_IN_LINE : HIDDEN_FOR_TERMINAL;
  hidden.lastIndex = 0;
  if (!hidden.test(text)) return text;
  return text.replace(hidden, (run: string, offset: number) => {
    if (isOrdinaryInvisible(run, codePointBefore(text, offset), text.codePointAt(offset + run.length)))
      return run;
    let shown = "";
    for (const char of run) shown += visible(char);
    return shown;
  });
}

/** Redacted, then made safe for a terminal: for error messages on stderr. */
export function redactForTerminal(text: string): string {
  return sanitizeForTerminal(redact(text));
}

/** Text from outside for one line of a dialog: white space runs as one space, sanitised, at most `max` code points. */
export function oneLineText(text: string, max: number): string {
  const head = text.length > max * 4 ? text.slice(0, max * 4).replace(/[\uD800-\uDBFF]$/, "") : text;
  return truncateText(sanitizeForTerminal(head.replace(/\s+/gu, " ").trim(), { oneLine: true }), max);
}

/** Cuts `text` to at most `max` code points (never inside a surrogate pair), marking the cut with `…`. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  if (points.length <= max) return text;
  return `${points.slice(0, Math.max(0, max - 1)).join("")}…`;
}
