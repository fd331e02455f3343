/** What waits for the sign-in is bounded in bytes as well as in messages: 16 calls of 30 MB once took the bridge from 65 to 734 MB. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { SignedOutQueue } from "../../src/bridge/sign-in/sign-in-gate.js";

const quiet = { info: () => {} };
const call = (id: number, bytes: number) =>
  ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "a".repeat(bytes) } },
  }) as JSONRPCMessage;

describe("the signed-out queue's byte budget", () => {
  it("refuses a message that would take the kept bytes past the budget, and says so once", () => {
    const said: string[] = [];
    const queue = new SignedOutQueue({ info: (line) => said.push(line) }, 256, 1_000_000);
    expect(queue.push(call(1, 400_000))).toBe("queued");
    expect(queue.push(call(2, 400_000))).toBe("queued");
    expect(queue.push(call(3, 400_000))).toBe("full");
    expect(queue.push(call(4, 400_000))).toBe("full");
    expect(queue.size).toBe(2);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/1000000 bytes/);
  });

  it("takes one message larger than the budget while nothing waits (each is bounded by --max-message-size)", () => {
    const queue = new SignedOutQueue(quiet, 256, 1_000_000);
    expect(queue.push(call(1, 2_000_000))).toBe("queued");
    expect(queue.push(call(2, 10))).toBe("full");
  });

  it("gives the bytes back when a message is taken out or the queue drained", () => {
    const queue = new SignedOutQueue(quiet, 256, 1_000_000);
    const first = call(1, 600_000);
    expect(queue.push(first)).toBe("queued");
    expect(queue.push(call(2, 600_000))).toBe("full");
    expect(queue.remove(first)).toBe(true);
    expect(queue.push(call(3, 600_000))).toBe("queued");
    queue.drain();
    expect(queue.push(call(4, 600_000))).toBe("queued");
    expect(queue.push(call(5, 300_000))).toBe("queued");
  });

  it("keeps the count bound as before", () => {
    const queue = new SignedOutQueue(quiet, 2);
    expect(queue.push(call(1, 1))).toBe("queued");
    expect(queue.push(call(2, 1))).toBe("queued");
    expect(queue.push(call(3, 1))).toBe("full");
  });
});
