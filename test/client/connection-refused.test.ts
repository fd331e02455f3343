/** A refused connection on 127.0.0.1 over the platform fetch: integration, since the closed port and the ECONNREFUSED it gives are the subject. */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import type { ClientTestOptions } from "../../src/client/client.js";
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
    } as ClientTestOptions);
    const error = await client.createChat({ message: "hi" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatConnectionError);
    expect((error as Error).message).toContain("ECONNREFUSED");
    expect(counting.calls()).toBe(2);
  });
});
