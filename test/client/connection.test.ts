/** Real-socket checks over the platform fetch: a refused connection on 127.0.0.1, answers that never complete. */
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { ChatClient, ChatConnectionError, type FetchLike } from "../../src/index.js";

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function countingFetch() {
  let calls = 0;
  const fetch: FetchLike = (url, init) => {
    calls++;
    return globalThis.fetch(url, init);
  };
  return { fetch, calls: () => calls };
}

describe("connection refused", () => {
  it("a POST to a closed port is retried (it never left) and ends in ChatConnectionError", async () => {
    const counting = countingFetch();
    const client = new ChatClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      token: "t",
      maxRetries: 1,
      fetch: counting.fetch,
      sleep: async () => {},
    });
    const error = await client.createChat({ message: "hi" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatConnectionError);
    expect((error as Error).message).toContain("ECONNREFUSED");
    expect(counting.calls()).toBe(2);
  });
});

describe("answers that never complete", () => {
  const servers: Server[] = [];
  /** A loopback server that starts a JSON answer and never finishes it. */
  async function halfAnswering(): Promise<string> {
    const server = createHttpServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.write("{");
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("the timeout covers the body: a call whose answer never completes is a ChatTimeoutError", async () => {
    const client = new ChatClient({
      baseUrl: await halfAnswering(),
      token: "t",
      timeoutMs: 200,
      maxRetries: 0,
    });
    await expect(client.getChat("chat_1")).rejects.toMatchObject({ name: "ChatTimeoutError" });
  });

  it("an abort while the answer is still coming rejects with the signal's reason", async () => {
    const client = new ChatClient({ baseUrl: await halfAnswering(), token: "t", maxRetries: 0 });
    const controller = new AbortController();
    const pending = client.getChat("chat_1", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 50);
    await expect(pending).rejects.toThrow("stop");
  });
});
