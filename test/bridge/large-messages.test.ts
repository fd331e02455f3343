import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectThroughBridge, initializeLine, spawnRawBridge } from "./fixtures/spawn-bridge.js";
import { startTestMcpServer, type TestMcpServer } from "./fixtures/test-mcp-server.js";

const MB = 1_000_000;
const textOf = (result: unknown): string =>
  ((result as { content: { type: string; text: string }[] }).content[0]?.text ?? "") as string;

let server: TestMcpServer;
beforeEach(async () => {
  server = await startTestMcpServer();
});
afterEach(async () => {
  await server.close();
});

/** A call's wait here: a few seconds alone, far longer beside the rest of the suite on two cores. */
const LOADED_MS = 200_000;

describe("large messages are relayed whole, both ways (--max-message-size raised for a host that reads them)", () => {
  it("relays 8 MB and 20 MB tool results and an 8 MB tool argument", async () => {
    // The SDK host reads at most 10 MiB a line unless told otherwise (as a host with large tools must be).
    const bridge = await connectThroughBridge(["--max-message-size", "64", server.url], {
      maxBufferSize: 64 * 1024 * 1024,
    });
    try {
      for (const bytes of [8 * MB, 20 * MB]) {
        const result = await bridge.client
          .callTool({ name: "blob", arguments: { bytes } }, { timeout: LOADED_MS })
          .catch((error: unknown) => {
            throw new Error(`${String(error)}; the bridge's stderr:\n${bridge.stderr()}`);
          });
        expect(textOf(result).length).toBe(bytes);
      }
      const argument = "a".repeat(8 * MB);
      const echoed = await bridge.client.callTool(
        { name: "echo", arguments: { text: argument } },
        { timeout: LOADED_MS },
      );
      expect(textOf(echoed)).toBe(argument);
      expect(server.echoed.at(-1)?.length).toBe(8 * MB);
    } finally {
      await bridge.close();
    }
    // About 6 s alone; 36 MB through three processes on a machine the rest of the suite keeps busy took over 60 s.
  }, 240_000);
});

describe("a message over --max-message-size is answered with an error naming the flag", () => {
  it("by default, a 12 MB answer (past the 10 MiB line a TypeScript-SDK host reads) is an error, not a dead session", async () => {
    const bridge = await connectThroughBridge([server.url]);
    try {
      const result = bridge.client.callTool(
        { name: "blob", arguments: { bytes: 12 * MB } },
        { timeout: LOADED_MS },
      );
      await expect(result).rejects.toThrow(/--max-message-size \(8 MiB\)/);
      const small = await bridge.client.callTool({ name: "blob", arguments: { bytes: 10 } });
      expect(textOf(small)).toBe("x".repeat(10));
    } finally {
      await bridge.close();
    }
  }, 60_000);

  it("host -> server: the request gets the error and nothing is sent; the session goes on", async () => {
    const bridge = await connectThroughBridge(["--max-message-size", "1", server.url]);
    try {
      await expect(
        bridge.client.callTool({ name: "echo", arguments: { text: "a".repeat(2 * MB) } }),
      ).rejects.toThrow(/--max-message-size/);
      expect(server.echoed).toEqual([]);
      const small = await bridge.client.callTool({ name: "echo", arguments: { text: "still here" } });
      expect(textOf(small)).toBe("still here");
    } finally {
      await bridge.close();
    }
  }, 30_000);

  it("server -> host: the host's request gets the error; the session goes on", async () => {
    const bridge = await connectThroughBridge(["--max-message-size", "1", server.url]);
    try {
      const result = bridge.client.callTool({ name: "blob", arguments: { bytes: 2 * MB } });
      await expect(result).rejects.toThrow(/--max-message-size/);
      const small = await bridge.client.callTool({ name: "blob", arguments: { bytes: 10 } });
      expect(textOf(small)).toBe("x".repeat(10));
    } finally {
      await bridge.close();
    }
  }, 30_000);
});

describe("a message nested millions deep is refused by a cheap check before parsing", () => {
  it("answers the request with an error at once and keeps relaying", async () => {
    const bridge = spawnRawBridge([server.url]);
    try {
      bridge.send(initializeLine(1));
      await bridge.waitFor((message) => message.id === 1);
      const depth = 2_000_000;
      bridge.send(
        `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":${"[".repeat(depth)}${"]".repeat(depth)}}},"id":"deep"}`,
      );
      const answer = await bridge.waitFor((message) => message.id === "deep", 10_000);
      // Parsing it overflowed the stack; the depth check refuses it before any parse.
      expect(JSON.stringify(answer.error)).toMatch(/nested deeper than 1000/);
      bridge.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }));
      await bridge.waitFor((message) => message.id === 2);
    } finally {
      bridge.child.stdin.end();
      await bridge.exited(5000);
    }
  }, 30_000);
});
