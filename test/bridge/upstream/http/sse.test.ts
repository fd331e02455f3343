/** The one SSE parser (eventsource-parser behind the bridge's decoding): the same events however the bytes are split. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ServerSentEvent, ServerSentEventParser } from "../../../../src/bridge/upstream/http/sse.js";

const encoder = new TextEncoder();

function parseChunks(chunks: Uint8Array[]): ServerSentEvent[] {
  const events: ServerSentEvent[] = [];
  const parser = new ServerSentEventParser({ onEvent: (event) => events.push(event) });
  for (const chunk of chunks) parser.push(chunk);
  return events;
}

/** `bytes` cut at the given offsets. */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const offsets = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let previous = 0;
  for (const offset of [...offsets, bytes.length]) {
    chunks.push(bytes.subarray(previous, offset));
    previous = offset;
  }
  return chunks;
}

const STREAM =
  '\uFEFFevent: message\r\nid: 1\ndata: {"text":"é☃𝄞 \uFEFF"}\r\r: comment\ndata: a\ndata:b\nretry: 250\n\nid: 2\ndata: {"k":1}\n\n';
const EXPECTED: ServerSentEvent[] = [
  { event: "message", id: "1", retry: undefined, data: '{"text":"é☃𝄞 \uFEFF"}' },
  { event: undefined, id: "1", retry: 250, data: "a\nb" },
  { event: undefined, id: "2", retry: undefined, data: '{"k":1}' },
];

describe("a text/event-stream body is parsed as the SSE format defines", () => {
  it("reads one event in one chunk (the usual answer to a POST)", () => {
    expect(
      parseChunks([encoder.encode('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')]),
    ).toEqual([
      { event: "message", id: undefined, retry: undefined, data: '{"jsonrpc":"2.0","id":1,"result":{}}' },
    ]);
  });

  it("strips a byte order mark at the start only, and keeps U+FEFF inside data", () => {
    expect(parseChunks([encoder.encode(STREAM)])).toEqual(EXPECTED);
  });

  it("gives the same events however the bytes are split (inside characters, between \\r and \\n)", () => {
    const bytes = encoder.encode(STREAM);
    fc.assert(
      fc.property(fc.array(fc.nat(bytes.length), { maxLength: 12 }), (cuts) => {
        expect(parseChunks(split(bytes, cuts))).toEqual(EXPECTED);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps an event that is not finished by a blank line pending", () => {
    expect(parseChunks([encoder.encode("data: x\n")])).toEqual([]);
  });
});

describe("the parser's seams", () => {
  it("reports retry as soon as it is read, also in an event without data", () => {
    const retries: number[] = [];
    const events: ServerSentEvent[] = [];
    const parser = new ServerSentEventParser({
      onEvent: (event) => events.push(event),
      onRetry: (milliseconds) => retries.push(milliseconds),
    });
    parser.push(encoder.encode("retry: 0\n\nretry: x\nretry: 40\n"));
    expect(retries).toEqual([0, 40]);
    expect(events).toEqual([]);
  });

  it("after discardEvent, the half-read event is forgotten and the next one parses whole", () => {
    const events: ServerSentEvent[] = [];
    const parser = new ServerSentEventParser({ onEvent: (event) => events.push(event) });
    parser.push(encoder.encode("id: 5\n\ndata: dropped-start \xe2"));
    expect(events).toEqual([]);
    parser.discardEvent();
    parser.push(encoder.encode("data: next\n\n"));
    expect(events).toEqual([{ event: undefined, id: undefined, retry: undefined, data: "next" }]);
  });

  it("the hand-written parser is gone: both upstreams import the one module", async () => {
    const { readFile } = await import("node:fs/promises");
    for (const file of ["src/bridge/upstream/legacy/event-stream.ts", "src/bridge/upstream/modern.ts"]) {
      const source = await readFile(file, "utf8");
      expect(source).not.toMatch(/class ServerSentEventParser/);
      expect(source).toMatch(/ServerSentEventParser[^;]*\} from "\.\.?\/(\.\.\/)?http\/(sse|index)\.js"/);
    }
  });
});
