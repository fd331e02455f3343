/** `resolve --integrations` with MCP presets: a preset name is accepted where a preset is asked for, and what is sent is said first. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../../src/cli/run.js";
import { ChatClient } from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { recordingIo } from "./helpers.js";

let server: ReferenceServer;
let acme: ChatClient;
beforeAll(async () => {
  server = await startReferenceServer({ port: 0, host: "127.0.0.1" });
  acme = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme as string });
});
afterAll(() => server?.close());

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = recordingIo();
  const code = await run(["--base-url", server.url, "--token", server.apiKeys.acme as string, ...args], io);
  return { code, out: io.out, err: io.err };
}

describe("a presets-only request (Linear)", () => {
  it("--integrations Linear confirms the preset, saying so before it is sent", async () => {
    const chat = await acme.createChat({ message: "Track the issues of my app" });
    const result = await cli("resolve", chat.id, "--integrations", "Linear");
    expect(result.err).not.toMatch(/asks for no names/);
    expect(result.code).toBe(0);
    expect(result.err).toContain("Confirming MCP preset Linear");
    expect(await acme.getPendingTask(chat.id)).toBeNull();
  });
});

describe("an integration and a preset (Neon + Linear)", () => {
  it("--integrations Neon says the Linear preset is confirmed with it", async () => {
    const chat = await acme.createChat({ message: "Add a database and track issues" });
    const result = await cli("resolve", chat.id, "--integrations", "Neon");
    expect(result.code).toBe(0);
    expect(result.err).toContain(
      "Confirming Neon and MCP preset Linear (the request's MCP presets go with it)",
    );
  });

  it("--integrations Neon,Linear names both: the same task, no extra note", async () => {
    const chat = await acme.createChat({ message: "Add a database and track issues" });
    const result = await cli("resolve", chat.id, "--integrations", "Neon,Linear");
    expect(result.code).toBe(0);
    expect(result.err).toContain("Confirming Neon and MCP preset Linear");
    expect(result.err).not.toContain("go with it");
  });

  it("a name that is neither asked for is refused before anything is sent, listing integrations and presets", async () => {
    const chat = await acme.createChat({ message: "Add a database and track issues" });
    const result = await cli("resolve", chat.id, "--integrations", "Neon,Jira");
    expect(result.code).toBe(1);
    expect(result.err).toContain("it asks for Neon and MCP preset Linear, you gave Neon, Jira");
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("integration");
  });
});
