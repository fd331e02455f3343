/** The upstream's cookie jar: what a server sets comes back to that origin only, as Domain, Path, Secure, Max-Age and Expires say, within bounds. */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  CookieJar,
  MAX_COOKIE_BYTES,
  MAX_COOKIES,
  withCookieJar,
} from "../../../../src/bridge/upstream/http/cookie-jar.js";
import type { HttpAnswer, HttpExchange } from "../../../../src/bridge/upstream/http/http-exchange.js";

const MCP = new URL("https://mcp.example.com/api/mcp");

async function jarWith(...setCookies: string[]): Promise<CookieJar> {
  const jar = new CookieJar();
  await jar.capture(MCP, setCookies);
  return jar;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("what comes back, and where", () => {
  it("sends a cookie back to its origin, and never to another origin (scheme, host or port)", async () => {
    const jar = await jarWith("lb=instance-7; Path=/; HttpOnly; SameSite=Lax");
    expect(jar.header(MCP)).toBe("lb=instance-7");
    expect(jar.header(new URL("https://mcp.example.com/other"))).toBe("lb=instance-7");
    for (const other of [
      "http://mcp.example.com/api/mcp",
      "https://mcp.example.com:8443/api/mcp",
      "https://evil.example/api/mcp",
      "https://sub.mcp.example.com/api/mcp",
    ])
      expect(jar.header(new URL(other))).toBeUndefined();
  });

  it("a Domain that the host is not in is refused; one that it is in keeps the cookie on this origin still", async () => {
    const jar = await jarWith("a=1; Domain=evil.example", "b=2; Domain=.example.com", "c=3; Domain=com");
    expect(jar.header(MCP)).toBe("b=2");
    expect(jar.header(new URL("https://other.example.com/api/mcp"))).toBeUndefined();
  });

  it("honours Path: the default is the request path's folder; a cookie for another path stays home", async () => {
    const jar = await jarWith(
      "here=1",
      "root=2; Path=/",
      "there=3; Path=/elsewhere",
      "deeper=4; Path=/api/mcp/x",
    );
    expect(jar.header(MCP)).toBe("here=1; root=2");
    // Longer paths first, as RFC 6265 §5.4 asks.
    expect(jar.header(new URL("https://mcp.example.com/elsewhere/y"))).toBe("there=3; root=2");
  });

  it("a Secure cookie from plain http is refused (loopback aside)", async () => {
    const jar = new CookieJar();
    await jar.capture(new URL("http://mcp.example.com/mcp"), ["s=1; Secure", "p=2"]);
    expect(jar.header(new URL("http://mcp.example.com/mcp"))).toBe("p=2");
    await jar.capture(new URL("http://127.0.0.1:8080/mcp"), ["s=1; Secure"]);
    expect(jar.header(new URL("http://127.0.0.1:8080/mcp"))).toBe("s=1");
  });

  it("__Host- cookies need Secure, Path=/ and no Domain; __Secure- ones need Secure", async () => {
    const jar = await jarWith(
      "__Host-ok=1; Secure; Path=/",
      "__Host-domain=2; Secure; Path=/; Domain=example.com",
      "__Host-path=3; Secure; Path=/api",
      "__Secure-no=4",
      "__Secure-yes=5; Secure",
    );
    expect(jar.header(MCP)).toBe("__Secure-yes=5; __Host-ok=1"); // the longer path (/api) first
  });
});

describe("how long a cookie lives", () => {
  it("Max-Age=0, or an Expires in the past, removes it; Max-Age wins over Expires", async () => {
    const jar = await jarWith("a=1", "b=2", "c=3; Expires=Wed, 21 Oct 2099 07:28:00 GMT");
    await jar.capture(MCP, ["a=gone; Max-Age=0", "b=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]);
    await jar.capture(MCP, ["c=4; Max-Age=60; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]);
    expect(jar.header(MCP)).toBe("c=4");
  });

  it("an expired cookie is not sent", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const now = Date.now();
    const jar = new CookieJar();
    await jar.capture(MCP, ["short=1; Max-Age=5", `dated=2; Expires=${new Date(now + 5000).toUTCString()}`]);
    expect(jar.header(MCP)).toBe("short=1; dated=2");
    vi.setSystemTime(now + 6000);
    expect(jar.header(MCP)).toBeUndefined();
  });

  it("a cookie set again replaces the old value", async () => {
    const jar = await jarWith("lb=1", "lb=2");
    expect(jar.header(MCP)).toBe("lb=2");
  });
});

describe("bounds: a hostile server cannot grow the jar", () => {
  it(`keeps at most ${MAX_COOKIES} cookies (the oldest go first)`, async () => {
    const cookies = Array.from({ length: MAX_COOKIES + 20 }, (_, index) => `c${index}=${index}`);
    const jar = await jarWith(...cookies.slice(0, 35));
    await jar.capture(MCP, cookies.slice(35));
    const sent = jar.header(MCP)?.split("; ") ?? [];
    expect(sent).toHaveLength(MAX_COOKIES);
    expect(sent[0]).toBe("c20=20");
  });

  it(`refuses a cookie over ${MAX_COOKIE_BYTES} bytes, and names or values with control characters`, async () => {
    const jar = await jarWith(
      `big=${"x".repeat(MAX_COOKIE_BYTES)}`,
      "bad\u0007=1",
      "v=a\u0000b",
      "=novalue",
      "ok=1",
    );
    expect(jar.header(MCP)).toBe("ok=1");
  });
});

describe("withCookieJar: the upstream's exchange", () => {
  it("captures every Set-Cookie of an answer and sends them on the next requests", async () => {
    const sent: Array<string | undefined> = [];
    const answer = (setCookies: string[]): HttpAnswer => ({
      status: 200,
      ok: true,
      headers: { get: () => null, getSetCookie: () => setCookies },
      body: null,
      text: async () => "",
    });
    const base: HttpExchange = async (_url, request) => {
      sent.push(request.headers.cookie);
      return answer(
        sent.length === 1 ? ["lb=7; Path=/", "other=x; Expires=Wed, 21 Oct 2099 07:28:00 GMT"] : [],
      );
    };
    const exchange = withCookieJar(base, new CookieJar());
    await exchange(MCP, { method: "POST", headers: {} });
    await exchange(MCP, { method: "GET", headers: {} });
    await exchange(MCP, { method: "DELETE", headers: {} });
    expect(sent).toEqual([undefined, "other=x; lb=7", "other=x; lb=7"]); // the longer path (/api) first
  });
});
