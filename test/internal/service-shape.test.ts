/** The one judgement of "this URL is some other web server, not the chat service", shared by the CLI, client and doctor. */
import { describe, expect, it } from "vitest";
import {
  doesNotLookLikeChatService,
  isNotChatService,
  markNotChatService,
  notChatServiceMessage,
} from "../../src/internal/service-shape.js";

describe("doesNotLookLikeChatService", () => {
  it.each([
    [404, "text/html; charset=utf-8", true],
    [405, "text/plain", true],
    [500, "text/html", true],
    [400, undefined, true],
    [404, "application/json", false],
    [404, "application/problem+json", false],
    [200, "text/html", false],
    [401, "text/html", false],
    [407, "text/html", false],
    [429, "text/html", false],
    [502, "text/html", false],
    [503, "text/html", false],
  ])("%i with %s -> %s", (status, contentType, expected) => {
    expect(doesNotLookLikeChatService({ status, contentType })).toBe(expected);
  });

  it("an answer in the service's own error shape is the service, whatever its content type says", () => {
    expect(doesNotLookLikeChatService({ status: 404, contentType: "text/plain", structured: true })).toBe(
      false,
    );
  });
});

describe("notChatServiceMessage", () => {
  it("names the URL once, what answered, and that there is no /v2 API or MCP endpoint", () => {
    const message = notChatServiceMessage("http://127.0.0.1:9/", {
      status: 404,
      contentType: "text/html; charset=utf-8",
    });
    expect(message).toBe(
      "the server at http://127.0.0.1:9/ does not look like the chat service (it answered 404 with a text/html page, " +
        "not the chat service's JSON): it has no /v2 API or MCP endpoint there",
    );
    expect(message.split("http://127.0.0.1:9/")).toHaveLength(2);
  });
});

describe("the marker", () => {
  it("tells a marked error from any other", () => {
    const error = markNotChatService(new Error("x"));
    expect(isNotChatService(error)).toBe(true);
    expect(isNotChatService(new Error("x"))).toBe(false);
    expect(isNotChatService("x")).toBe(false);
  });
});
