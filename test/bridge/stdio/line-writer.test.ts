/** stdout framing: messages become lines, those of one event-loop turn joined into one write, in order. */
import { describe, expect, it } from "vitest";
import { createLineWriter } from "../../../src/bridge/stdio/line-writer.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function recordingSink() {
  const writes: string[] = [];
  return { writes, sink: { write: (text: string) => writes.push(text) } };
}

describe("messages written in the same turn", () => {
  it("go out as one write of whole lines, in the order they were written", async () => {
    const { writes, sink } = recordingSink();
    const writeLine = createLineWriter(sink);
    for (let id = 1; id <= 3; id++) writeLine({ jsonrpc: "2.0", id, result: { text: "a\nb" } });
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(writes[0]!.split("\n")).toEqual([
      '{"jsonrpc":"2.0","id":1,"result":{"text":"a\\nb"}}',
      '{"jsonrpc":"2.0","id":2,"result":{"text":"a\\nb"}}',
      '{"jsonrpc":"2.0","id":3,"result":{"text":"a\\nb"}}',
      "",
    ]);
  });
});

describe("messages written in later turns", () => {
  it("go out in later writes, after the earlier ones", async () => {
    const { writes, sink } = recordingSink();
    const writeLine = createLineWriter(sink);
    writeLine({ id: 1 });
    await nextTurn();
    writeLine({ id: 2 });
    await nextTurn();
    expect(writes).toEqual(['{"id":1}\n', '{"id":2}\n']);
  });
});

describe("flush before exit", () => {
  it("writes what is queued at once, and nothing twice", async () => {
    const { writes, sink } = recordingSink();
    const writeLine = createLineWriter(sink);
    writeLine({ id: 1 });
    writeLine.flush();
    expect(writes).toEqual(['{"id":1}\n']);
    await nextTurn();
    writeLine.flush();
    expect(writes).toEqual(['{"id":1}\n']);
  });
});

describe("messages that JSON.stringify cannot write (nested thousands of levels deep on Node 24 and older, or cyclic)", () => {
  const deep = () =>
    JSON.parse(`{"jsonrpc":"2.0","id":7,"result":{"v":${"[".repeat(5000)}${"]".repeat(5000)}}}`);

  it("are written from the text they were received as, pretty-printed line breaks made spaces", async () => {
    const { writes, sink } = recordingSink();
    const writeLine = createLineWriter(sink);
    const raw = `{"jsonrpc":"2.0","id":7,\n  "result":{"v":${"[".repeat(5000)}${"]".repeat(5000)}}}`;
    writeLine(deep(), raw);
    await nextTurn();
    expect(writes).toEqual([`${raw.replace("\n", " ")}\n`]);
    expect(JSON.parse(writes[0]!).id).toBe(7);
  });

  it("without that text, an answer becomes an error answer to its id, and a notification is dropped", async () => {
    const { writes, sink } = recordingSink();
    const said: string[] = [];
    const writeLine = createLineWriter(sink, (reason) => said.push(reason));
    // JSON.stringify throws on nesting this deep up to Node 24 (Node 26 writes it); on a cycle, on every Node.
    const unwritable = () => {
      const message = { jsonrpc: "2.0", id: 7, result: { v: {} as Record<string, unknown> } };
      message.result.v.self = message;
      return message;
    };
    writeLine(unwritable() as never);
    writeLine({ jsonrpc: "2.0", method: "notifications/message", params: unwritable().result } as never);
    writeLine({ jsonrpc: "2.0", id: 8, result: {} });
    await nextTurn();
    const lines = writes
      .join("")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ id: 7, error: { code: -32000 } });
    expect(lines[0].error.message).toMatch(/could not be relayed/);
    expect(lines[1]).toEqual({ jsonrpc: "2.0", id: 8, result: {} });
    expect(said).toHaveLength(2);
  });
});
