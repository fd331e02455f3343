/** The one URL check of every link the package shows or opens (src/auth/shown-url.ts): http(s), no user info, nothing hidden, sent as its href. */
import { describe, expect, it } from "vitest";
import { UnsafeUrlError } from "../../src/auth/errors.js";
import { checkShownUrl } from "../../src/auth/shown-url.js";

describe("checkShownUrl", () => {
  it.each([
    ["user info", "https://chat.example.com@evil.example/device"],
    ["a password", "https://user:pw@chat.example.com/"],
    ["a raw right-to-left override", "https://evil.example/\u202Emoc.elpmaxe"],
    ["a raw newline", "https://evil.example/a\nb"],
    ["a raw carriage return", "https://evil.example/a\rb"],
    ["a space", "https://evil.example/a b"],
    ["a zero-width space", "https://evil.example/a\u200Bb"],
    ["a tag character", "https://evil.example/\u{E0041}"],
    ["a C1 control", "https://evil.example/\u009B31m"],
    ["a javascript: URL", "javascript:alert(1)"],
    ["a file: URL", "file:///etc/passwd"],
    ["a data: URL", "data:text/html,hi"],
    ["no URL at all", "not a url"],
    ["quotes and a backtick in its host", 'https://chat.example.com"`.evil.example/'],
    ["an apostrophe in its host", "https://it's.evil.example/"],
  ])("refuses %s", (_name, url) => {
    expect(() => checkShownUrl(url, "test link")).toThrow(UnsafeUrlError);
    expect(() => checkShownUrl(url, "test link")).toThrow(/^Refusing the test link: /);
  });

  it("returns the parser's href and the site it leads to (IDNs in ASCII)", () => {
    expect(checkShownUrl("HTTPS://Chat.Example.COM:443/device?code=AB%20CD")).toEqual({
      href: "https://chat.example.com/device?code=AB%20CD",
      site: "chat.example.com",
    });
    expect(checkShownUrl("http://127.0.0.1:8787/start/x")).toEqual({
      href: "http://127.0.0.1:8787/start/x",
      site: "127.0.0.1:8787",
    });
    expect(checkShownUrl("https://bücher.example/").site).toBe("xn--bcher-kva.example");
  });

  it("names a long site by its end (the part that says whose it is), bounded", () => {
    const long = `${"a".repeat(60)}.${"b".repeat(60)}.${"c".repeat(60)}.evil.example`;
    const { site } = checkShownUrl(`https://${long}/`);
    expect(site.length).toBeLessThanOrEqual(64);
    expect(site).toMatch(/^….*c\.evil\.example$/);
  });
});
