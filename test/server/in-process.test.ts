/** The in-process reference server's handle beyond `fetch`: `fetchTarget` tells the handler the target as sent. */
import { describe, expect, it } from "vitest";
import { ErrorBodySchema } from "../../src/wire/index.js";
import { useRequestableReferenceServer } from "../support/reference-request.js";

const ctx = useRequestableReferenceServer();

describe("fetchTarget: the request target reaches the routes unfolded, as node:http hands it on", () => {
  for (const target of ["/v2/chats/%2e%2e", "/v2/chats/.."]) {
    it(`${target} is a chat id the /v2 route refuses, where fetch's URL folds it away to /v2/`, async () => {
      const init = { headers: { authorization: `Bearer ${ctx.server.apiKeys.acme}` } };
      const raw = await ctx.server.fetchTarget(target, init);
      expect(raw.status).toBe(400);
      expect(ErrorBodySchema.parse(await raw.json()).error.message).toMatch(/^chatId must be/);

      const folded = await ctx.server.fetch(`${ctx.server.url}${target}`, init);
      expect(folded.status).toBe(404);
      expect(ErrorBodySchema.parse(await folded.json()).error.message).toBe("No route GET /v2/.");
    });
  }

  it("answers as fetch does otherwise: the query is read, the Host header is the URL's", async () => {
    const reply = await ctx.server.fetchTarget("/v2/chats?limit=1", {
      headers: { authorization: `Bearer ${ctx.server.apiKeys.acme}` },
    });
    expect(reply.status).toBe(200);
    expect((await reply.json()).object).toBe("list");
    const mcp = await ctx.server.fetchTarget("/mcp", { method: "POST" });
    // Not 403 "Invalid Host": the Host header a client would send was given.
    expect(mcp.status).toBe(401);
    await mcp.body?.cancel();
  });
});
