/** HTTP edges of /v2: auth challenges, validation, size limit, unknown routes, request ids and rate limiting. */
import { describe, expect, it } from "vitest";
import { ErrorBodySchema } from "../../src/wire/index.js";
import { useRequestableReferenceServer } from "../support/reference-request.js";
import { apiFor, call } from "./helpers.js";

const ctx = useRequestableReferenceServer();

describe("Missing or invalid bearer token: 401 unauthorized with WWW-Authenticate", () => {
  it("missing token: challenge with resource_metadata and no error parameter", async () => {
    const reply = await call(ctx.server, undefined, "GET", "/v2/chats");
    expect(reply.status).toBe(401);
    expect(reply.body.error.code).toBe("unauthorized");
    const challenge = reply.headers.get("www-authenticate");
    expect(challenge).toBe(
      `Bearer resource_metadata="${ctx.server.url}/.well-known/oauth-protected-resource/v2"`,
    );
  });

  it("unknown token: invalid_token challenge", async () => {
    const reply = await call(ctx.server, "chat_sk_not-a-real-key", "GET", "/v2/chats");
    expect(reply.status).toBe(401);
    const challenge = reply.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(
      `resource_metadata="${ctx.server.url}/.well-known/oauth-protected-resource/v2"`,
    );
  });

  it("a non-bearer scheme is invalid", async () => {
    const reply = await call(ctx.server, undefined, "GET", "/v2/chats", undefined, {
      authorization: `Basic ${Buffer.from("a:b").toString("base64")}`,
    });
    expect(reply.status).toBe(401);
  });
});

describe("Error body on every non-2xx", () => {
  it("unknown routes anywhere are 404 not_found with the error body", async () => {
    for (const path of ["/nope", "/v2/unknown", "/v2/chats/chat_x/unknown"]) {
      const reply = await call(ctx.server, ctx.server.apiKeys.acme, "GET", path);
      expect(reply.status).toBe(404);
      expect(ErrorBodySchema.parse(reply.body).error.code).toBe("not_found");
    }
  });

  it("malformed JSON is 400 bad_request", async () => {
    const reply = await call(ctx.server, ctx.server.apiKeys.acme, "POST", "/v2/chats", '{"message": "hi"');
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe("bad_request");
  });

  it("a body that breaks the schema is 400 naming the field", async () => {
    const reply = await apiFor(ctx.server, "acme").post("/v2/chats", { message: "" });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain("body.message");
  });

  it("a body over 1 MiB is 413 payload_too_large", async () => {
    const reply = await apiFor(ctx.server, "acme").post("/v2/chats", {
      message: "x".repeat(1024 * 1024 + 1),
    });
    expect(reply.status).toBe(413);
    expect(reply.body.error.code).toBe("payload_too_large");
  });
});

describe("Query and path validation: 400 bad_request", () => {
  for (const limit of ["0", "101", "abc", "2.5", "-1"]) {
    it(`limit=${limit}`, async () => {
      const reply = await apiFor(ctx.server, "acme").get(`/v2/chats?limit=${limit}`);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe("bad_request");
    });
  }

  it("limit=1 and limit=100 are accepted", async () => {
    expect((await apiFor(ctx.server, "acme").get("/v2/chats?limit=1")).status).toBe(200);
    expect((await apiFor(ctx.server, "acme").get("/v2/chats?limit=100")).status).toBe(200);
  });

  it("a cursor that no list issued", async () => {
    const reply = await apiFor(ctx.server, "acme").get("/v2/chats?cursor=bogus");
    expect(reply.status).toBe(400);
  });

  it("a chat id outside the id format", async () => {
    const reply = await apiFor(ctx.server, "acme").get(`/v2/chats/${encodeURIComponent("bad id!")}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe("bad_request");
  });
});

describe("x-request-id on every response", () => {
  it("echoes a sane incoming id, also in the error body", async () => {
    const reply = await call(ctx.server, undefined, "GET", "/v2/chats", undefined, {
      "x-request-id": "trace-123",
    });
    expect(reply.headers.get("x-request-id")).toBe("trace-123");
    expect(reply.body.error.requestId).toBe("trace-123");
  });

  it("generates one when absent or not sane", async () => {
    const ok = await apiFor(ctx.server, "acme").get("/v2/chats");
    expect(ok.headers.get("x-request-id")).toMatch(/^req_/);
    const weird = await call(ctx.server, ctx.server.apiKeys.acme, "GET", "/v2/chats", undefined, {
      "x-request-id": "has spaces and <tags>",
    });
    expect(weird.headers.get("x-request-id")).toMatch(/^req_/);
  });
});

describe("Rate limit: 429 rate_limited with Retry-After when configured low", () => {
  const limited = useRequestableReferenceServer({ rateLimit: { capacity: 2, refillPerSecond: 0.01 } });

  it("refuses the request past the burst, per credential", async () => {
    const api = apiFor(limited.server, "acme");
    expect((await api.get("/v2/chats")).status).toBe(200);
    expect((await api.get("/v2/chats")).status).toBe(200);
    const refused = await api.get("/v2/chats");
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await apiFor(limited.server, "personal").get("/v2/chats")).status).toBe(200);
  });
});
