/** The SSE event size cap: events over the cap are dropped byte by byte as they arrive, the others pass untouched. */
import { describe, expect, it } from "vitest";
import { EventSizeCap } from "../../../../src/bridge/upstream/http/sse.js";

/** Pushes `text` in chunks of `size` bytes; returns what a parser would have kept (after discards) and the drops. */
function run(text: string, max: number, size: number) {
  let kept = "";
  let pending = "";
  const dropped: number[] = [];
  const cap = new EventSizeCap(max, {
    feed: (bytes, endsEvent) => {
      pending += Buffer.from(bytes).toString("utf8");
      if (endsEvent) {
        kept += pending;
        pending = "";
      }
    },
    discard: () => {
      pending = "";
    },
    dropped: (bytes) => dropped.push(bytes),
  });
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) cap.push(bytes.subarray(i, i + size));
  return { fed: kept + pending, dropped };
}

describe("EventSizeCap", () => {
  const small = 'id: 1\ndata: {"a":1}\n\n';
  const big = `data: ${"x".repeat(100)}\n\n`;

  for (const size of [1, 3, 7, 64, 4096]) {
    it(`drops only the event over the cap, in chunks of ${size} bytes`, () => {
      const { fed, dropped } = run(small + big + small, 50, size);
      expect(fed).toBe(small + small);
      expect(dropped).toEqual([big.length]);
    });
  }

  it("understands CRLF and CR line ends", () => {
    const crlf = `data: ${"y".repeat(60)}\r\n\r\n`;
    const ok = "data: 1\r\n\r\n";
    expect(run(ok + crlf + ok, 50, 5)).toEqual({ fed: ok + ok, dropped: [crlf.length] });
    const cr = `data: ${"z".repeat(60)}\r\r`;
    expect(run(`data: 1\r\r${cr}data: 2\r\r`, 50, 4)).toEqual({
      fed: "data: 1\r\rdata: 2\r\r",
      dropped: [cr.length],
    });
  });

  it("passes small events untouched, as views of the same chunk (no copies)", () => {
    const slices: Uint8Array[] = [];
    const cap = new EventSizeCap(1024, { feed: (b) => slices.push(b), discard: () => {}, dropped: () => {} });
    const chunk = Buffer.from(small + small.slice(0, 5));
    cap.push(chunk);
    expect(slices.every((slice) => slice.buffer === chunk.buffer)).toBe(true);
    expect(Buffer.concat(slices).toString()).toBe(small + small.slice(0, 5));
  });
});
