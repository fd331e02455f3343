/** Which proxy a URL goes through: the variables as curl reads them, NO_PROXY entries, loopback, the explicit option. */
import { describe, expect, it } from "vitest";
import {
  describeProxyFor,
  hasProxyVariable,
  isLoopbackHost,
  ProxyConfigError,
  resolveProxy,
} from "../../src/internal/proxy.js";

const PROXY = "http://alice:s3cret@proxy.corp:3128";

function proxyOf(url: string, env: Record<string, string>) {
  return resolveProxy(url, { env }).proxy?.display;
}

describe("the variable for the URL's scheme", () => {
  it("https: URLs use HTTPS_PROXY and http: URLs HTTP_PROXY; neither falls back to the other", () => {
    expect(proxyOf("https://chat.example/v2", { HTTPS_PROXY: PROXY })).toBe("http://proxy.corp:3128");
    expect(proxyOf("http://chat.example/v2", { HTTPS_PROXY: PROXY })).toBeUndefined();
    expect(proxyOf("http://chat.example/v2", { HTTP_PROXY: PROXY })).toBe("http://proxy.corp:3128");
    expect(proxyOf("https://chat.example/v2", { HTTP_PROXY: PROXY })).toBeUndefined();
  });

  it("the lowercase variable wins over the uppercase one, and an empty one counts as unset", () => {
    const env = { https_proxy: "http://lower:1", HTTPS_PROXY: "http://upper:2" };
    expect(resolveProxy("https://a.example", { env }).proxy?.source).toBe("https_proxy");
    expect(proxyOf("https://a.example", { https_proxy: "", HTTPS_PROXY: "http://upper:2" })).toBe(
      "http://upper:2",
    );
  });

  it("a value without a scheme is an http proxy, as curl reads it", () => {
    expect(proxyOf("https://a.example", { HTTPS_PROXY: "proxy.corp:8080" })).toBe("http://proxy.corp:8080");
  });

  it("socks and nonsense values are refused with the variable's name and without the credentials", () => {
    expect(() => resolveProxy("https://a.example", { env: { HTTPS_PROXY: "socks5://u:pw@s:1080" } })).toThrow(
      ProxyConfigError,
    );
    const text = describeProxyFor("https://a.example", { HTTPS_PROXY: "socks5://u:pw@s:1080" });
    expect(text).toContain("HTTPS_PROXY");
    expect(text).not.toContain("pw");
  });

  it("hasProxyVariable is false for an environment without any proxy variable", () => {
    expect(hasProxyVariable({ PATH: "/bin", NO_PROXY: "*" })).toBe(false);
    expect(hasProxyVariable({ http_proxy: "http://p:1" })).toBe(true);
  });
});

describe("loopback is never proxied", () => {
  it.each([
    "http://127.0.0.1:8787",
    "http://127.1.2.3",
    "http://localhost:1",
    "http://app.localhost",
    "http://[::1]:9",
    "http://[0:0:0:0:0:0:0:1]",
    "http://[::ffff:127.0.0.1]:8787",
  ])("%s goes direct even with a proxy set", (url) => {
    expect(proxyOf(url, { HTTP_PROXY: PROXY })).toBeUndefined();
    expect(resolveProxy(url, { proxy: PROXY }).proxy).toBeUndefined();
  });

  it("names that only look local are not loopback", () => {
    expect(isLoopbackHost("localhost.example")).toBe(false);
    expect(isLoopbackHost("128.0.0.1")).toBe(false);
    expect(isLoopbackHost("chat.test")).toBe(false);
    expect(isLoopbackHost("::2")).toBe(false);
    expect(isLoopbackHost("::ffff:10.0.0.1")).toBe(false);
    expect(isLoopbackHost("127.0.0.1.example")).toBe(false);
  });
});

describe("NO_PROXY", () => {
  const cases: [string, string, boolean][] = [
    ["*", "https://anything.example", true],
    ["corp.example", "https://corp.example", true],
    ["corp.example", "https://api.corp.example", true],
    ["corp.example", "https://notcorp.example", false],
    [".corp.example", "https://corp.example", true],
    [".corp.example", "https://a.b.corp.example", true],
    ["*.corp.example", "https://a.corp.example", true],
    ["CORP.example", "https://Api.Corp.Example", true],
    ["corp.example:8443", "https://corp.example:8443", true],
    ["corp.example:8443", "https://corp.example", false],
    ["corp.example:443", "https://corp.example", true],
    ["other.example, corp.example", "https://x.corp.example", true],
    ["other.example corp.example", "https://x.corp.example", true],
    ["10.0.0.0/8", "https://10.1.2.3", true],
    ["10.0.0.0/8", "https://11.1.2.3", false],
    ["192.168.1.5", "https://192.168.1.5:99", true],
    ["[fd00::1]:8443", "https://[fd00::1]:8443", true],
    ["fd00::/8", "https://[fd00::1]", true],
    ["fd00::/8", "https://[fe80::1]", false],
    ["2001:db8::/32", "https://[2001:db8:0:0:0:0:0:7]", true],
    ["2001:db8::1", "https://[2001:0db8::0001]", true],
    ["10.0.0.0/33", "https://10.1.2.3", false],
    ["10.0.0.0/x", "https://10.1.2.3", false],
    ["10.1.2.3/32", "https://10.1.2.3", true],
    ["10.1.2.3/32", "https://10.1.2.4", false],
    ["192.168.0.0/16", "https://192.168.10.20:8443", true],
    ["0.0.0.0/0", "https://203.0.113.9", true],
    ["0.0.0.0/0", "https://[2001:db8::1]", false],
    ["::/0", "https://[2001:db8::1]", true],
    ["::/0", "https://203.0.113.9", false],
    ["fe80::/10", "https://[febf::1]", true],
    ["fe80::/10", "https://[fec0::1]", false],
    ["2001:db8::/129", "https://[2001:db8::1]", false],
    ["10.0.0.0/8", "https://[::ffff:10.1.2.3]", true],
    ["[2001:db8::5]", "https://[2001:db8::5]:8443", true],
    ["[2001:db8::5]:443", "https://[2001:db8::5]", true],
    ["[2001:db8::5]:8443", "https://[2001:db8::5]", false],
    ["2001:db8::5", "https://[2001:db8:0::5]", true],
    ["2001:db8::5", "https://2001.example", false],
    ["10.0.0.0/8", "https://10.example", false],
    ["2.3", "https://10.1.2.3", false],
    ["10.0.0.0/8", "https://chat.test", false],
    ["", "https://corp.example", false],
  ];
  it.each(cases)("NO_PROXY=%j and %s: bypassed %s", (noProxy, url, bypassed) => {
    const decision = resolveProxy(url, { env: { HTTPS_PROXY: PROXY, NO_PROXY: noProxy } });
    expect(decision.proxy === undefined).toBe(bypassed);
    if (bypassed) expect(decision.reason).toMatch(/^NO_PROXY matches /);
  });

  it("lowercase no_proxy is read too", () => {
    expect(proxyOf("https://corp.example", { HTTPS_PROXY: PROXY, no_proxy: "corp.example" })).toBeUndefined();
  });
});

describe("the explicit proxy option", () => {
  it("a URL replaces the environment; false turns proxies off", () => {
    const env = { HTTPS_PROXY: "http://env-proxy:1", NO_PROXY: "*" };
    expect(resolveProxy("https://a.example", { env, proxy: PROXY }).proxy?.source).toBe("proxy option");
    expect(
      resolveProxy("https://a.example", { env: { HTTPS_PROXY: PROXY }, proxy: false }).proxy,
    ).toBeUndefined();
  });
});

describe("describeProxyFor", () => {
  it("says which proxy and where it came from, never the credentials", () => {
    const line = describeProxyFor("https://chat.example/mcp", { HTTPS_PROXY: PROXY });
    expect(line).toBe("via proxy http://proxy.corp:3128 (from HTTPS_PROXY)");
    expect(line).not.toMatch(/alice|s3cret/);
  });

  it("says why a URL goes direct", () => {
    expect(describeProxyFor("https://chat.example", {})).toBe("direct (HTTPS_PROXY is not set)");
    expect(describeProxyFor("http://127.0.0.1:8787", { HTTP_PROXY: PROXY })).toBe(
      "direct (loopback is never proxied)",
    );
    expect(
      describeProxyFor("https://a.corp.example", { HTTPS_PROXY: PROXY, NO_PROXY: ".corp.example" }),
    ).toBe("direct (NO_PROXY matches .corp.example)");
  });
});
