/** Error mapping of ChatClient: each status to its class, with code, message, body, request id and hints. */
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import {
  AuthenticationError,
  BadRequestError,
  ChatApiError,
  ChatError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from "../../src/index.js";
import { BASE_URL, errorBody, testClient, useMockService } from "./fixtures.js";

const server = useMockService();

function answerGetChat(response: () => Response) {
  server.use(http.get(`${BASE_URL}/v2/chats/:chatId`, response));
}

async function getChatError(): Promise<ChatApiError> {
  const { client } = testClient({ maxRetries: 0 });
  const error = await client.getChat("chat_1").catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ChatApiError);
  return error as ChatApiError;
}

describe("each error status maps to its class", () => {
  const cases = [
    [400, "bad_request", BadRequestError],
    [401, "unauthorized", AuthenticationError],
    [403, "forbidden", PermissionDeniedError],
    [404, "not_found", NotFoundError],
    [409, "conflict", ConflictError],
    [422, "unprocessable", UnprocessableEntityError],
    [429, "rate_limited", RateLimitError],
    [500, "internal", InternalServerError],
    [503, "unavailable", InternalServerError],
  ] as const;
  for (const [status, code, ErrorClass] of cases) {
    it(`${status} ${code} -> ${ErrorClass.name}`, async () => {
      answerGetChat(() => HttpResponse.json(errorBody(code, `the ${code} story`), { status }));
      const error = await getChatError();
      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toBeInstanceOf(ChatError);
      expect(error.name).toBe(ErrorClass.name);
      expect(error.status).toBe(status);
      expect(error.code).toBe(code);
      expect(error.message).toContain(`the ${code} story`);
      expect(error.message).toContain("GET /v2/chats/chat_1");
      expect(error.body).toEqual(errorBody(code, `the ${code} story`));
    });
  }

  it("a status with no class of its own (413) is the base ChatApiError", async () => {
    answerGetChat(() => HttpResponse.json(errorBody("payload_too_large", "too big"), { status: 413 }));
    const error = await getChatError();
    expect(error.constructor).toBe(ChatApiError);
    expect(error.code).toBe("payload_too_large");
  });
});

describe("request id", () => {
  it("comes from the x-request-id header and is quoted in the message", async () => {
    answerGetChat(() =>
      HttpResponse.json(errorBody("not_found", "no such chat"), {
        status: 404,
        headers: { "x-request-id": "req_42" },
      }),
    );
    const error = await getChatError();
    expect(error.requestId).toBe("req_42");
    expect(error.message).toContain("req_42");
    expect(error.headers.get("x-request-id")).toBe("req_42");
  });

  it("is undefined when the service sends none", async () => {
    answerGetChat(() => HttpResponse.json(errorBody("not_found", "no such chat"), { status: 404 }));
    expect((await getChatError()).requestId).toBeUndefined();
  });
});

describe("what to do next", () => {
  it("401 says how to sign in", async () => {
    answerGetChat(() => HttpResponse.json(errorBody("unauthorized", "bad token"), { status: 401 }));
    const error = await getChatError();
    expect(error.message).toContain("chat-cli login");
    expect(error.message).toContain("CHAT_API_KEY");
  });

  it("409 points at the pending task", async () => {
    answerGetChat(() => HttpResponse.json(errorBody("conflict", "task is stale"), { status: 409 }));
    expect((await getChatError()).message).toMatch(/pending/);
  });
});

describe("sso_required", () => {
  it("is a PermissionDeniedError carrying reauthUrl", async () => {
    const reauthUrl = `${BASE_URL}/sso/start?team=secure-corp`;
    answerGetChat(() =>
      HttpResponse.json(errorBody("sso_required", "SSO needed", { reauthUrl }), { status: 403 }),
    );
    const error = (await getChatError()) as PermissionDeniedError;
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error.code).toBe("sso_required");
    expect(error.reauthUrl).toBe(reauthUrl);
    expect(error.message).toContain(reauthUrl);
  });

  it("a plain forbidden has no reauthUrl", async () => {
    answerGetChat(() => HttpResponse.json(errorBody("forbidden", "no"), { status: 403 }));
    expect(((await getChatError()) as PermissionDeniedError).reauthUrl).toBeUndefined();
  });
});

describe("rate limits", () => {
  it("RateLimitError exposes Retry-After in milliseconds", async () => {
    answerGetChat(() =>
      HttpResponse.json(errorBody("rate_limited", "slow down"), {
        status: 429,
        headers: { "retry-after": "3" },
      }),
    );
    expect(((await getChatError()) as RateLimitError).retryAfterMs).toBe(3000);
  });
});

describe("odd error bodies still give a clear error with the status", () => {
  it("an HTML page from a proxy", async () => {
    answerGetChat(() => HttpResponse.html("<html><body>Bad gateway</body></html>", { status: 502 }));
    const error = await getChatError();
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.status).toBe(502);
    expect(error.code).toBe("http_502");
    expect(error.message).toContain("502");
    expect(error.message).toContain("text/html");
    expect(error.body).toBe("<html><body>Bad gateway</body></html>");
  });

  it("an empty body", async () => {
    answerGetChat(() => new HttpResponse(null, { status: 404 }));
    const error = await getChatError();
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.code).toBe("not_found");
    expect(error.body).toBeUndefined();
    expect(error.message).toContain("empty body");
  });

  it("JSON that is not the error shape", async () => {
    answerGetChat(() => HttpResponse.json({ detail: "nope" }, { status: 400 }));
    const error = await getChatError();
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.code).toBe("bad_request");
    expect(error.body).toBe('{"detail":"nope"}');
  });

  it("plain text", async () => {
    answerGetChat(() => HttpResponse.text("teapot", { status: 418 }));
    const error = await getChatError();
    expect(error.constructor).toBe(ChatApiError);
    expect(error.status).toBe(418);
    expect(error.message).toContain("418");
  });
});
