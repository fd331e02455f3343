/** `--callback-path` and `--auth-success-url` as given: the paths and pages refused before the loopback callback starts (what it answers with them: test/auth/loopback-callback.test.ts). */
import { describe, expect, it } from "vitest";
import { callbackPathProblem, successUrlProblem } from "../../src/auth/session/provider-options.js";

describe("callbackPath (--callback-path)", () => {
  it("refuses a path that is not absolute, carries a query, or would shadow the start page", () => {
    expect(callbackPathProblem("oauth/callback")).toMatch(/start with "\/"/);
    expect(callbackPathProblem("/cb?x=1")).toMatch(/query/);
    expect(callbackPathProblem("/start/x")).toMatch(/start page/);
    expect(callbackPathProblem("/a b")).toMatch(/characters/);
    expect(callbackPathProblem("/oauth/callback")).toBeUndefined();
  });

  // A path the URL parser would rewrite never matches a request's path, and `/a/../start/x` is the start page.
  it.each([
    ["climbs to the start page", "/a/../start/x"],
    ["climbs with percent-encoded dots", "/a/%2e%2e/start/x"],
    ["climbs above the root", "/../callback"],
    ["has a dot segment", "/./callback"],
    ["ends in a dot segment", "/oauth/.."],
    ["has an empty segment", "/oauth//callback"],
  ])("refuses a path that %s, as not a plain path", (_name, path) => {
    expect(callbackPathProblem(path)).toMatch(/plain path/);
  });
});

describe("successUrl (--auth-success-url)", () => {
  it("must be http(s) without credentials; plain http only to loopback", () => {
    expect(successUrlProblem("javascript:alert(1)")).toMatch(/http/);
    expect(successUrlProblem("file:///etc/passwd")).toMatch(/http/);
    expect(successUrlProblem("https://user:pw@example.com/")).toMatch(/credentials/);
    expect(successUrlProblem("http://example.com/done")).toMatch(/https/);
    expect(successUrlProblem("not a url")).toMatch(/URL/);
    expect(successUrlProblem("http://127.0.0.1:8080/ok")).toBeUndefined();
    expect(successUrlProblem("https://example.com/done?from=bridge")).toBeUndefined();
  });
});
