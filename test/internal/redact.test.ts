import { describe, expect, it } from "vitest";
import {
  environmentWithoutSecrets,
  REDACTED,
  redact,
  rememberSecret,
  rememberSecretVariable,
  sanitizeForTerminal,
  truncateText,
} from "../../src/internal/redact.js";

describe("redact: what a hostile error body echoes back is removed", () => {
  it("form-encoded credentials of a token request echoed by a gateway page", () => {
    const echoed =
      "HTTP 502: Raw body: grant_type=authorization_code&code=abc123&code_verifier=xyz789&" +
      "redirect_uri=http%3A%2F%2F127.0.0.1&client_id=c1&refresh_token=rt-1&client_secret=cs-1 error_code=7";
    const out = redact(echoed);
    for (const secret of ["abc123", "xyz789", "rt-1", "cs-1"]) expect(out).not.toContain(secret);
    expect(out).toContain(`code=${REDACTED}`);
    expect(out).toContain("client_id=c1");
    expect(out).toContain("error_code=7");
  });

  it("JSON credentials and Authorization values, but not a challenge's parameters", () => {
    const out = redact(
      '{"refresh_token":"r\\"t1","access_token" : "at1","error":"x"} Authorization: Bearer abcdef123456 ' +
        'Basic dXNlcjpwYXNz== WWW-Authenticate: Bearer resource_metadata="http://x/y", error="invalid_token"',
    );
    for (const secret of ['r\\"t1', "at1", "abcdef123456", "dXNlcjpwYXNz"]) expect(out).not.toContain(secret);
    expect(out).toContain('"error":"x"');
    expect(out).toContain('Bearer resource_metadata="http://x/y", error="invalid_token"');
  });

  it("the user info of a URL (a proxy's password), keeping scheme and host", () => {
    expect(redact("via http://alice:s%40cret@proxy.example:3128/ and https://bob@host/x")).toBe(
      `via http://${REDACTED}@proxy.example:3128/ and https://${REDACTED}@host/x`,
    );
  });

  it("every value the process remembered as secret, also URL-encoded", () => {
    rememberSecret("s3cr3t value/1", "short");
    const out = redact("plain s3cr3t value/1 and encoded s3cr3t%20value%2F1, short stays");
    expect(out).toBe(`plain ${REDACTED} and encoded ${REDACTED}, short stays`);
  });
});

describe("environmentWithoutSecrets: what a browser inherits", () => {
  it("drops CHAT_API_KEY, CHAT_MCP_CLIENT_SECRET and variables a --header named", () => {
    const env = { CHAT_API_KEY: "k", CHAT_MCP_CLIENT_SECRET: "s", MY_HEADER_TOKEN: "h", PATH: "/bin" };
    rememberSecretVariable("MY_HEADER_TOKEN", env);
    expect(environmentWithoutSecrets(env)).toEqual({ PATH: "/bin" });
  });
});

describe("sanitizeForTerminal: control characters shown, never acted on", () => {
  it("OSC, CSI (7- and 8-bit), carriage return, backspace and bidi overrides become visible", () => {
    const out = sanitizeForTerminal("a\u001b]0;pwn\u0007b\rc\u009b2J\b\u202ed\ne\tf");
    expect(out).toBe("a^[]0;pwn^Gb^Mc^[[2J^H<U+202E>d\ne\tf");
    expect(sanitizeForTerminal("x\ny\tz", { oneLine: true })).toBe("x^Jy^Iz");
    expect(sanitizeForTerminal("plain ünïcode ✓")).toBe("plain ünïcode ✓");
  });

  it("truncation never splits a surrogate pair", () => {
    expect(truncateText("ab😀😀cd", 4)).toBe("ab😀…");
    expect(truncateText("short", 10)).toBe("short");
  });
});

describe("sanitizeForTerminal: every bidi and line-separator code point is shown, never acted on", () => {
  const marks = ["061C", "200E", "200F", "2028", "2029", "202A", "202E", "2066", "2069"];
  it.each(marks)("U+%s becomes a visible <U+...> form, in both modes", (hex) => {
    const mark = String.fromCharCode(Number.parseInt(hex, 16));
    const name = `<U+${hex}>`;
    expect(sanitizeForTerminal(`a${mark}b`)).toBe(`a${name}b`);
    expect(sanitizeForTerminal(`a${mark}b`, { oneLine: true })).toBe(`a${name}b`);
  });

  it("vertical tab, form feed and NEL are controls even where newlines are kept", () => {
    expect(sanitizeForTerminal("a\u000bb\u000cc\u0085d")).toBe("a^Kb^Lc^[Ed");
  });
});
