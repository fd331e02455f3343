/** stdout framing: messages become lines, those of one event-loop turn joined into one write, in order. */
import { describe, expect, it } from "vitest";
import { createLineWriter } from "../../src/bridge/line-reader.js";

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
