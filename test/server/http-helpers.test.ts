import { describe, expect, it } from "vitest";
import {
  clearCookie,
  errorJsonResponse,
  html,
  pageResponse,
  readBodyText,
  readCookie,
  readFormBody,
  redirectResponse,
  serializeCookie,
  serviceErrorResponse,
} from "../../src/server/http.js";
import { ServiceError } from "../../src/server/service-error.js";

describe("error responses carry the CONTRACT error body", () => {
  it("maps a ServiceError to its status and code with the request id", async () => {
    const response = errorJsonResponse(new ServiceError("conflict", "No."), "req_1");
    expect(response.status).toBe(409);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({
      error: { code: "conflict", message: "No.", requestId: "req_1" },
    });
  });
  it("hides unknown errors as 500 internal", async () => {
    const response = errorJsonResponse(new Error("secret detail"), "req_2");
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain("secret detail");
    expect(JSON.parse(text).error.code).toBe("internal");
  });
  it("sets Retry-After on rate_limited", () => {
    const response = serviceErrorResponse("rate_limited", "Slow down.", "req_3", { retryAfter: 7 });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("7");
  });
});

describe("pages and redirects", () => {
  it("escapes interpolated text and sends the strict page headers", async () => {
    const response = pageResponse(200, "T<", html`<p>${"<script>"}</p>`, [
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
    ]);
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    const body = await response.text();
    expect(body).toContain("&lt;script&gt;");
    expect(body).not.toContain("<script>");
  });
  it("redirects without caching", () => {
    const response = redirectResponse("/x", 303);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/x");
    expect(response.headers.get("cache-control")).toBe("no-store");
  });
});

describe("cookies", () => {
  it("round-trips a value through Set-Cookie and Cookie", () => {
    const set = serializeCookie("s", "a b;c", {
      httpOnly: true,
      sameSite: "lax",
      secure: true,
      maxAgeMs: 60_000,
    });
    expect(set).toMatch(/^s=a%20b%3Bc; Path=\/; Max-Age=60; Expires=.*; HttpOnly; Secure; SameSite=Lax$/);
    const request = new Request("http://x/", {
      headers: { cookie: `other=1; s=${set.split(";")[0]!.slice(2)}` },
    });
    expect(readCookie(request, "s")).toBe("a b;c");
    expect(readCookie(request, "missing")).toBeUndefined();
  });
  it("clears with Max-Age=0", () => {
    expect(clearCookie("s")).toContain("Max-Age=0");
  });
  it("refuses a cookie name that could inject attributes", () => {
    expect(() => serializeCookie("a;b", "v")).toThrow(TypeError);
  });
});

describe("bodies are read with a byte cap", () => {
  it("reads text under the cap", async () => {
    expect(await readBodyText(new Request("http://x/", { method: "POST", body: "hello" }), 5)).toBe("hello");
  });
  it("refuses a streamed body past the cap with payload_too_large", async () => {
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const request = new Request("http://x/", { method: "POST", body: stream, duplex: "half" } as RequestInit);
    await expect(readBodyText(request, 10_000)).rejects.toMatchObject({ code: "payload_too_large" });
  });
  it("inflates a gzip body, counting the cap on inflated bytes", async () => {
    const { gzipSync } = await import("node:zlib");
    const gzip = (text: string) =>
      new Request("http://x/", {
        method: "POST",
        headers: { "content-encoding": "gzip" },
        body: gzipSync(text),
      });
    expect(await readBodyText(gzip("hello"), 100)).toBe("hello");
    await expect(readBodyText(gzip("x".repeat(10_000)), 1000)).rejects.toMatchObject({
      code: "payload_too_large",
    });
    const unknown = new Request("http://x/", {
      method: "POST",
      headers: { "content-encoding": "br" },
      body: "x",
    });
    await expect(readBodyText(unknown)).rejects.toMatchObject({ code: "bad_request" });
  });
  it("parses a form body and refuses another content type", async () => {
    const form = await readFormBody(
      new Request("http://x/", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
        body: "a=1&b=%20x",
      }),
    );
    expect(form.get("b")).toBe(" x");
    await expect(
      readFormBody(
        new Request("http://x/", { method: "POST", headers: { "content-type": "text/plain" }, body: "a=1" }),
      ),
    ).rejects.toMatchObject({ code: "bad_request" });
  });
});
