/** `resolve --integrations` with MCP presets: a preset name is accepted where a preset is asked for, and what is sent is said first; in-process on the reference server's handler. */
import { afterAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { createRequestableReferenceServer } from "../support/reference-request.js";
import { inProcessCli } from "./helpers.js";

const server = createRequestableReferenceServer();
afterAll(() => server.close());
const acme = new ChatClient({
  baseUrl: server.url,
  token: server.apiKeys.acme as string,
  fetch: server.fetch,
});
const inProcess = inProcessCli(server);

async function cli(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const { code, stdout, stderr } = await inProcess(["--token", server.apiKeys.acme as string, ...args]);
  return { code, out: stdout, err: stderr };
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
