/** `resolve` with a flag or a task for the other kind of pause: exit 3 (docs/chat-cli.md: "waits for another task type"), nothing sent; in-process on the reference server's handler. */
import { afterAll, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/client/index.js";
import { createInProcessReferenceServer } from "../../src/server/in-process.js";
import { inProcessCli } from "./helpers.js";

const server = createInProcessReferenceServer();
afterAll(() => server.close());
const token = server.apiKeys.acme as string;
const acme = new ChatClient({ baseUrl: server.url, token, fetch: server.fetch });
const cli = inProcessCli(server);

describe("a flag for the other task type", () => {
  it("--approve while the chat waits for an integration exits 3 and sends nothing", async () => {
    const chat = await acme.createChat({ message: "Add a database to my app" });
    const result = await cli(["--token", token, "resolve", chat.id, "--approve"]);
    expect(result.stderr).toContain("--approve needs a pause on permissions");
    expect(result.code).toBe(3);
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("integration");
  });

  it("--connected while the chat waits for permissions exits 3 and sends nothing", async () => {
    const chat = await acme.createChat({ message: "Add a database to my app" });
    await acme.confirmIntegrations(chat.id);
    const result = await cli(["--token", token, "resolve", chat.id, "--connected"]);
    expect(result.stderr).toContain("--connected needs a pause on an integration");
    expect(result.code).toBe(3);
    expect((await acme.getPendingTask(chat.id))?.kind).toBe("permissions");
  });
});

describe("resolve --task of another type than the chat waits for", () => {
  it("exit 3 saying what the chat waits for and which task type answers it", async () => {
    const chat = await acme.createChat({ message: "Add a database to my app" });
    const result = await cli(["--token", token, "resolve", chat.id, "--task", '{"type":"nope"}']);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      new RegExp(
        `chat ${chat.id} waits for integration: .+, answered by a "confirmed-steps" task, not "nope"`,
      ),
    );
    expect(result.stderr).not.toMatch(/moved on/);
  });
});
