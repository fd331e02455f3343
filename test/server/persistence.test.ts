/** `dataFile`: a restart with the same file keeps chats, messages, pauses and API keys; the server in-process (no port). */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Store } from "../../src/server/store.js";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { scratchDir } from "../support/scratch-dir.js";
import { apiFor, DATABASE_PROMPT } from "./helpers.js";

const dir = scratchDir("chat-ref-store-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("Persistence across a server restart with dataFile", () => {
  it("the same chats, messages, pending task and API keys come back", async () => {
    const dataFile = join(dir, "state.json");
    const first = createRequestableReferenceServer({ dataFile });
    const api = apiFor(first, "acme");
    const chat = (await api.post("/v2/chats", { message: DATABASE_PROMPT })).body;
    const messagesBefore = (await api.get(`/v2/chats/${chat.id}/messages`)).body;
    const keysBefore = first.apiKeys;
    await first.close();

    const second = createRequestableReferenceServer({ dataFile });
    try {
      expect(second.apiKeys).toEqual(keysBefore);
      const again = apiFor(second, "acme");
      const fetched = (await again.get(`/v2/chats/${chat.id}`)).body;
      expect({ ...fetched, url: undefined }).toEqual({ ...chat, url: undefined });
      expect((await again.get(`/v2/chats/${chat.id}/messages`)).body).toEqual(messagesBefore);
      const resumed = await again.post(`/v2/chats/${chat.id}/messages/resolve`, {
        task: { type: "confirmed-steps", connectedIntegrationNames: ["Neon"] },
      });
      expect(resumed.status).toBe(200);
      expect(resumed.body.finishReason).toBe("tool-calls");
    } finally {
      await second.close();
    }
  });

  it("writes atomically: no temp files are left next to the data file", async () => {
    const dataFile = join(dir, "atomic.json");
    const server = createRequestableReferenceServer({ dataFile });
    await apiFor(server, "personal").post("/v2/chats", { message: "hello" });
    await server.close();
    expect(readdirSync(dir).filter((name) => name.startsWith("atomic.json"))).toEqual(["atomic.json"]);
    expect(() => JSON.parse(readFileSync(dataFile, "utf8"))).not.toThrow();
  });

  it("a store collection (used by the OAuth part) survives a reload", () => {
    const dataFile = join(dir, "collections.json");
    const store = new Store({ dataFile });
    store.collection<{ name: string }>("oauth-clients").set("client_1", { name: "Inspector" });
    const reloaded = new Store({ dataFile });
    expect(reloaded.collection<{ name: string }>("oauth-clients").get("client_1")).toEqual({
      name: "Inspector",
    });
  });

  it("refuses to start on a file that is not a store, instead of overwriting it", async () => {
    const dataFile = join(dir, "foreign.json");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(dataFile, JSON.stringify({ something: "else" }));
    expect(() => createRequestableReferenceServer({ dataFile })).toThrow(/not a reference-server store/);
    expect(JSON.parse(readFileSync(dataFile, "utf8"))).toEqual({ something: "else" });
  });
});
