/** ChatClient and chat-cli pointed at some other web server (a fetch handler standing in for it): one sentence saying it is not the chat service, with the URL. */
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.js";
import { ChatClient, NotFoundError } from "../../src/client/index.js";
import { isNotChatService } from "../../src/internal/service-shape.js";
import { recordingIo } from "../cli/helpers.js";

/** Never dialed: every request goes to `site`. */
const siteUrl = "http://127.0.0.1:8089";
const PAGE = `<!doctype html><html><head><title>Not Found</title></head><body>${"<p>lorem</p>".repeat(200)}</body></html>`;

/** A plain web site: every path is an HTML 404 page. */
const site = async () =>
  new Response(PAGE, { status: 404, headers: { "content-type": "text/html; charset=utf-8" } });

describe("ChatClient against an unrelated web server", () => {
  it("listChats fails saying the server does not look like the chat service, naming the URL, no id advice", async () => {
    const client = new ChatClient({ baseUrl: siteUrl, token: "t0ken-for-test", maxRetries: 0, fetch: site });
    const error = await client.listChats().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NotFoundError);
    expect(isNotChatService(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain(`the server at ${siteUrl} does not look like the chat service`);
    expect(message).toContain("404 with a text/html page");
    expect(message).not.toMatch(/Check the id/);
    expect(message).not.toContain("lorem");
  });
});

describe("chat-cli list against an unrelated web server", () => {
  it("says so once, with the URL, and suggests checking the base URL; exit 1", async () => {
    const io = recordingIo();
    expect(await run(["--base-url", siteUrl, "--token", "t0ken-for-test", "list"], io, { fetch: site })).toBe(
      1,
    );
    expect(io.out).toBe("");
    expect(io.err).toContain("does not look like the chat service");
    expect(io.err.split(siteUrl)).toHaveLength(2);
    expect(io.err).not.toMatch(/Check the id|lorem/);
    expect(io.err).toMatch(/--base-url|CHAT_API_URL/);
  });

  it("get <id> says the same, not that the chat was not found", async () => {
    const io = recordingIo();
    expect(
      await run(["--base-url", siteUrl, "--token", "t0ken-for-test", "get", "chat_1"], io, { fetch: site }),
    ).toBe(1);
    expect(io.err).toContain("does not look like the chat service");
    expect(io.err).not.toContain("not found for this account");
  });
});
