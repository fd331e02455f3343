/** The bench's line reader (bench/lib/processes.mjs): lines split across chunks come whole, and a long line costs its length once. */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { onLines } from "../../bench/lib/processes.mjs";

describe("the bench's line reader", () => {
  it("joins a line split across chunks, splits chunks holding several, and skips blank lines", async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    onLines(stream, (line) => lines.push(line));
    stream.write("a\nb");
    stream.write("c\n\nd");
    stream.write("\ne\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual(["a", "bc", "d", "e"]);
  });

  it("reads a 20 MB line sent in 64 KiB chunks whole", async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    onLines(stream, (line) => lines.push(line));
    const line = "x".repeat(20_000_000);
    for (let at = 0; at < line.length; at += 65_536) stream.write(line.slice(at, at + 65_536));
    stream.write("\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => l.length)).toEqual([20_000_000]);
  });
});
