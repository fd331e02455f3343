/** The client's request/response plumbing on its own: bodies, paths, queries, headers and the typed failures. */
import { TimeoutError } from "ky";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ClientLog } from "../../src/client/logger.js";
import {
  createKy,
  failureOf,
  mergeHeaders,
  parseBody,
  pathId,
  queryString,
} from "../../src/client/transport.js";
import {
  ChatAbortError,
  ChatConnectionError,
  ChatError,
  ChatTimeoutError,
  NotFoundError,
  ResponseValidationError,
} from "../../src/index.js";

describe("parseBody", () => {
  const schema = z.object({ id: z.string() });

  it("returns the parsed body when it matches the schema, and the JSON as is without one", () => {
    expect(parseBody(schema, '{"id":"a","extra":1}', "GET /v2/chats/a")).toEqual({ id: "a" });
    expect(parseBody(undefined, '{"anything":[1]}', "GET /x")).toEqual({ anything: [1] });
  });

  it("names a body that is not JSON, and an empty one", () => {
    expect(() => parseBody(schema, "<html>", "GET /x")).toThrow(
      /GET \/x answered with a body that is not JSON\./,
    );
    expect(() => parseBody(schema, "", "GET /x")).toThrow(/not JSON \(empty\)/);
  });

  it("names the first three issues and counts the rest", () => {
    const wide = z.object({ a: z.string(), b: z.string(), c: z.string(), d: z.string(), e: z.string() });
    let thrown: unknown;
    try {
      parseBody(wide, "{}", "GET /y");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ResponseValidationError);
    expect((thrown as Error).message).toMatch(/breaks the wire format: a: .*; b: .*; c: .* \(and 2 more\)/);
  });
});

describe("paths, queries and headers", () => {
  it("encodes an id as one path segment and refuses an empty one", () => {
    expect(pathId("chatId", "a/b c")).toBe("a%2Fb%20c");
    expect(() => pathId("chatId", "")).toThrow(TypeError);
  });

  it("skips undefined and empty query values and encodes the rest", () => {
    expect(queryString({ topic: "a&b", limit: 5, cursor: undefined, empty: "" })).toBe(
      "?topic=a%26b&limit=5",
    );
    expect(queryString({ cursor: undefined })).toBe("");
  });

  it("merges headers case-insensitively; null removes one, undefined is skipped", () => {
    const base = { accept: "application/json", "user-agent": "ua" };
    expect(mergeHeaders(base, { "User-Agent": null, Accept: undefined, "X-Extra": "1" })).toEqual({
      accept: "application/json",
      "x-extra": "1",
    });
    expect(mergeHeaders(base, undefined)).toBe(base);
  });
});

const quietLog = new ClientLog(undefined, "off", undefined);

describe("createKy", () => {
  it("hands ky's Request to the given fetch and reads the whole body within the attempt", async () => {
    const seen: string[] = [];
    const send = createKy(
      async (input) => {
        seen.push(input instanceof Request ? `${input.method} ${input.url}` : String(input));
        return new Response('{"ok":true}', { status: 200 });
      },
      false,
      quietLog,
    );
    const answer = await send("http://127.0.0.1:9/v2/chats", { method: "GET", retry: 0 });
    expect(await answer.text()).toBe('{"ok":true}');
    expect(seen).toEqual(["GET http://127.0.0.1:9/v2/chats"]);
  });
});

describe("failureOf", () => {
  const call = { label: "GET /v2/chats", baseUrl: "http://127.0.0.1:9", timeoutMs: 1234 };

  it("turns an HTTP error answer into the service's typed error", async () => {
    const ky = createKy(
      async () =>
        new Response(JSON.stringify({ error: { code: "not_found", message: "no such chat" } }), {
          status: 404,
          headers: { "content-type": "application/json" },
        }),
      false,
      quietLog,
    );
    const error = await ky("http://127.0.0.1:9/v2/chats", { retry: 0 }).catch((e: unknown) => e);
    const failure = await failureOf(error, call);
    expect(failure).toBeInstanceOf(NotFoundError);
    expect((failure as Error).message).toContain("no such chat");
  });

  it("says how long a timed-out call waited, and that a POST may still complete", async () => {
    const timeout = new TimeoutError(new Request("http://127.0.0.1:9/v2/chats", { method: "POST" }));
    const failure = await failureOf(timeout, { ...call, label: "POST /v2/chats" });
    expect(failure).toBeInstanceOf(ChatTimeoutError);
    expect((failure as Error).message).toMatch(/timed out after 1234 ms .* may still complete/);
  });

  it("wraps the caller's abort in ChatAbortError, its reason the cause", async () => {
    const controller = new AbortController();
    const reason = new Error("stopped by the caller");
    controller.abort(reason);
    const failure = await failureOf(new Error("aborted"), { ...call, signal: controller.signal });
    expect(failure).toBeInstanceOf(ChatAbortError);
    expect(failure).toBeInstanceOf(ChatError);
    expect((failure as ChatAbortError).cause).toBe(reason);
    expect((failure as Error).message).toContain("stopped by the caller");
  });

  describe("requestSent is true to what happened", () => {
    const post = { ...call, label: "POST /v2/chats", idempotencyKey: "cmb-key-1" };
    const failed = (cause: object) => new TypeError("fetch failed", { cause });
    it.each([
      ["Node, refused", failed(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))],
      [
        "Node, DNS failure",
        failed(Object.assign(new Error("getaddrinfo ENOTFOUND x"), { code: "ENOTFOUND" })),
      ],
      [
        "Node, TLS protocol mismatch",
        failed(Object.assign(new Error("wrong version number"), { code: "ERR_SSL_WRONG_VERSION_NUMBER" })),
      ],
      [
        "Node, untrusted certificate",
        failed(Object.assign(new Error("self-signed"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" })),
      ],
      [
        "Bun, refused (the code on the error itself)",
        Object.assign(new TypeError("ECONNREFUSED: Unable to connect."), { code: "ECONNREFUSED" }),
      ],
      [
        "Deno, refused",
        failed(new Error("error sending request for url (x): client error (Connect): tcp connect error")),
      ],
      [
        "Deno, DNS failure",
        failed(new Error("error sending request for url (x): client error (Connect): dns error: failed")),
      ],
    ])("%s: requestSent false, never 'may have been processed'", async (_, error) => {
      const failure = (await failureOf(error, post)) as ChatConnectionError;
      expect(failure).toBeInstanceOf(ChatConnectionError);
      expect(failure.requestSent).toBe(false);
      expect(failure.message).not.toMatch(/may have been processed|request was sent/);
      expect(failure.idempotencyKey).toBe("cmb-key-1");
    });

    it("a reset after sending: requestSent true, the key on the error and in the message", async () => {
      const reset = failed(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
      const failure = (await failureOf(reset, post)) as ChatConnectionError;
      expect(failure.requestSent).toBe(true);
      expect(failure.message).toMatch(/may have been processed/);
      expect(failure.idempotencyKey).toBe("cmb-key-1");
      expect(failure.message).toContain("cmb-key-1");
    });

    it("a timed-out POST says it may have reached the service, and requestSent says so too", async () => {
      const failure = (await failureOf(
        new TimeoutError(new Request("http://x/v2/chats")),
        post,
      )) as ChatTimeoutError;
      expect(failure).toBeInstanceOf(ChatTimeoutError);
      expect(failure.requestSent).toBe(true);
      expect(failure.message).toMatch(/may have reached the service/);
      expect(failure.idempotencyKey).toBe("cmb-key-1");
    });
  });

  it("describes a failure to connect with the base URL", async () => {
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    });
    const failure = await failureOf(refused, call);
    expect(failure).toBeInstanceOf(ChatConnectionError);
    expect((failure as Error).message).toContain("http://127.0.0.1:9");
  });
});
