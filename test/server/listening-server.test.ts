/** startReferenceServer(): the listening server's URLs and keys, and a prompt close with a half-sent request holding a socket: the socket is the subject (integration). */
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { startReferenceServer } from "../../src/server/index.js";

describe("startReferenceServer(): url, mcpUrl, apiKeys, close()", () => {
  it("resolves to loopback URLs and a key per seeded slug", async () => {
    const server = await startReferenceServer();
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.mcpUrl).toBe(`${server.url}/mcp`);
      expect(Object.keys(server.apiKeys).sort()).toEqual(["acme", "personal", "secure-corp", "studio"]);
    } finally {
      await server.close();
    }
  });

  it("close() ends promptly even with a half-sent request holding a socket open", async () => {
    const server = await startReferenceServer();
    const { port } = new URL(server.url);
    const socket = connect(Number(port), "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("POST /v2/chats HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
    const closedSocket = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => {});
    await server.close();
    await closedSocket;
    await expect(fetch(`${server.url}/v2/chats`)).rejects.toThrow();
  });
});
