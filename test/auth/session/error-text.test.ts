/** Failure text a session may show (src/auth/errors.ts): redacted, visible-safe, and the code of a request that got no answer. */
import { describe, expect, it } from "vitest";
import { messageOf, networkErrorCode } from "../../../src/auth/errors.js";
import { rememberSecret } from "../../../src/internal/redact.js";

describe("messageOf", () => {
  it("removes a remembered secret and terminal escapes from an error's message", () => {
    rememberSecret("tok-0123456789abcdef");
    const text = messageOf(new Error("bad token tok-0123456789abcdef \u001b[31mred\u001b[0m"));
    expect(text).not.toContain("tok-0123456789abcdef");
    expect(text).not.toContain("\u001b");
    expect(text).toContain("bad token");
  });
});

describe("networkErrorCode", () => {
  it("names the code of a refused connection, also when the failure is wrapped", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    const failure = new TypeError("fetch failed", { cause: refused });
    expect(networkErrorCode(failure)).toBe("ECONNREFUSED");
    const wrapped = new Error("Could not load the authorization server metadata", { cause: failure });
    expect(networkErrorCode(wrapped)).toBe("ECONNREFUSED");
  });

  it('says "no answer" for a request that failed without a code', () => {
    expect(networkErrorCode(new TypeError("fetch failed"))).toBe("no answer");
  });

  it("is undefined for an error that is not a failed request", () => {
    expect(networkErrorCode(new Error("invalid_grant"))).toBeUndefined();
  });
});
