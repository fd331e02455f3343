/** readBoundedBytes/readBoundedText (src/internal/bounded-body.ts): every body the package reads, capped in bytes. */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { BodyTooLargeError, readBoundedBytes, readBoundedText } from "../../src/internal/bounded-body.js";

const bytes = (length: number, fill = 0x61) => new Uint8Array(length).fill(fill);

/** A web stream that never ends, and whether it was cancelled and how much of it was pulled. */
function endlessWebStream() {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      seen.pulled += 1;
      controller.enqueue(bytes(1024));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe("a body within its cap", () => {
  it("is read whole, exactly at the cap too", async () => {
    const response = new Response(bytes(10));
    expect(await readBoundedBytes(response, { maxBytes: 10, what: "the answer" })).toEqual(bytes(10));
    expect(await readBoundedText(new Response("héllo"), { maxBytes: 6, what: "the answer" })).toBe("héllo");
  });

  it("an empty or missing body is no bytes", async () => {
    expect(await readBoundedText(new Response(null), { maxBytes: 1, what: "the answer" })).toBe("");
    expect(await readBoundedText(new Response(""), { maxBytes: 0, what: "the answer" })).toBe("");
  });

  it("a Node stream and a plain async iterable are read the same way", async () => {
    const node = Readable.from([Buffer.from("ab"), Buffer.from("cd")]);
    expect(await readBoundedText(node, { maxBytes: 4, what: "the stream" })).toBe("abcd");
    async function* chunks() {
      yield bytes(2);
      yield bytes(2, 0x62);
    }
    expect(await readBoundedText(chunks(), { maxBytes: 4, what: "the chunks" })).toBe("aabb");
  });
});

describe("a body over its cap", () => {
  it("one byte over is refused with an error naming what and the cap", async () => {
    const error = await readBoundedBytes(new Response(bytes(11)), {
      maxBytes: 10,
      what: "the metadata",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BodyTooLargeError);
    expect((error as BodyTooLargeError).maxBytes).toBe(10);
    expect((error as Error).message).toBe("the metadata is larger than 10 bytes; not read");
  });

  it("a declared content-length over the cap is refused before a byte is read", async () => {
    const { stream, seen } = endlessWebStream();
    const message = { headers: new Headers({ "content-length": "5000" }), body: stream };
    await expect(readBoundedBytes(message, { maxBytes: 100, what: "the answer" })).rejects.toThrow(
      BodyTooLargeError,
    );
    expect(seen.cancelled).toBe(true);
  });

  it("with truncate, the first maxBytes are kept, even across a chunk", async () => {
    const message = { headers: new Headers({ "content-length": "20" }), body: new Response(bytes(20)).body };
    const text = await readBoundedText(message, { maxBytes: 7, what: "the error page", truncate: true });
    expect(text).toBe("aaaaaaa");
  });
});

describe("an endless body", () => {
  it("a web stream is cancelled at the cap, not read on", async () => {
    const { stream, seen } = endlessWebStream();
    await expect(readBoundedBytes(stream, { maxBytes: 10_000, what: "the stream" })).rejects.toThrow(
      "the stream is larger than 10000 bytes; not read",
    );
    expect(seen.cancelled).toBe(true);
    // What the stream's queue held ahead of the reader, at most: nothing past the cap is waited for.
    expect(seen.pulled).toBeLessThanOrEqual(12);
  });

  it("a Node stream is destroyed at the cap", async () => {
    const endless = new Readable({
      read() {
        this.push(Buffer.alloc(1024));
      },
    });
    await expect(readBoundedBytes(endless, { maxBytes: 4096, what: "the socket" })).rejects.toThrow(
      BodyTooLargeError,
    );
    expect(endless.destroyed).toBe(true);
  });

  it("a body with its own cancel (the bridge's answers) is cancelled", async () => {
    let cancelled = false;
    const body = {
      async *[Symbol.asyncIterator]() {
        for (;;) yield bytes(100);
      },
      async cancel() {
        cancelled = true;
      },
    };
    await expect(readBoundedBytes(body, { maxBytes: 250, what: "the answer" })).rejects.toThrow(
      BodyTooLargeError,
    );
    expect(cancelled).toBe(true);
  });
});

describe("a body that is not UTF-8", () => {
  it("bytes come back exactly; text has U+FFFD for each bad sequence", async () => {
    const latin1 = Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0xff]);
    expect(await readBoundedBytes(new Response(latin1), { maxBytes: 5, what: "the body" })).toEqual(latin1);
    expect(await readBoundedText(new Response(latin1), { maxBytes: 5, what: "the body" })).toBe(
      "caf\uFFFD\uFFFD",
    );
  });

  it("a cut through a multi-byte character ends in U+FFFD, never a throw", async () => {
    const text = await readBoundedText(new Response("aé"), { maxBytes: 2, what: "the body", truncate: true });
    expect(text).toBe("a\uFFFD");
  });
});

describe("a body that breaks mid-way", () => {
  function breaking() {
    let sent = false;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(new Error("connection reset"));
        else controller.enqueue(bytes(3));
        sent = true;
      },
    });
  }

  it("throws the stream's error", async () => {
    await expect(readBoundedBytes(breaking(), { maxBytes: 10, what: "the body" })).rejects.toThrow(
      "connection reset",
    );
  });

  it("with keepWhatArrived, yields the bytes that arrived", async () => {
    const text = await readBoundedText(breaking(), { maxBytes: 10, what: "the body", keepWhatArrived: true });
    expect(text).toBe("aaa");
  });
});

describe("a cloned body", () => {
  it("refusing one branch does not wait for the other branch to be read", async () => {
    const response = new Response(bytes(100_000));
    const clone = response.clone();
    await expect(readBoundedBytes(clone, { maxBytes: 10, what: "the clone" })).rejects.toThrow(
      BodyTooLargeError,
    );
    expect((await response.arrayBuffer()).byteLength).toBe(100_000);
  });
});
