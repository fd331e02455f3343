/** The one way the package reads a body it did not write: a byte cap, the rest never read, an error naming the cap. */

/** A body to read: a web stream (fetch's), a Node stream, or any async iterable of bytes (the bridge's answers). */
export type ByteStream =
  | ReadableStream<Uint8Array>
  | (AsyncIterable<Uint8Array> & { cancel?: () => Promise<void> });

/** A message with a body: a fetch `Request` or `Response`, or the bridge's `HttpAnswer`. */
export interface MessageWithBody {
  readonly headers: { get(name: string): string | null };
  readonly body: ByteStream | null;
}

export interface BodyCap {
  /** The most bytes read; past this the body is refused (or cut, with `truncate`) and its rest never read. */
  maxBytes: number;
  /** What the body is, as the error says it: "the metadata at https://...". */
  what: string;
  /** Keep the first `maxBytes` instead of refusing a longer body (for bodies only shown, such as error pages). */
  truncate?: boolean;
  /** A body that breaks mid-way yields the bytes that arrived instead of the stream's error (for lenient reads). */
  keepWhatArrived?: boolean;
}

/** A body longer than its cap; nothing past the cap was read. */
export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  constructor(
    readonly what: string,
    readonly maxBytes: number,
  ) {
    super(`${what} is larger than ${maxBytes} bytes; not read`);
  }
}

/**
 * The body's bytes, at most `cap.maxBytes`. A message declaring a longer `content-length` is refused before a byte
 * is read. Throws BodyTooLargeError past the cap (unless `truncate`), and the stream's own error when it breaks
 * (unless `keepWhatArrived`).
 */
export async function readBoundedBytes(
  source: MessageWithBody | ByteStream,
  cap: BodyCap,
): Promise<Uint8Array<ArrayBuffer>> {
  const message = isMessage(source) ? source : undefined;
  const body = message ? message.body : (source as ByteStream);
  const declared = Number(message?.headers.get("content-length") ?? Number.NaN);
  if (declared > cap.maxBytes && !cap.truncate) {
    if (body) stopReading(body, pullerOf(body));
    throw new BodyTooLargeError(cap.what, cap.maxBytes);
  }
  if (!body) return new Uint8Array(0);
  const pull = pullerOf(body);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await pull.next();
    } catch (error) {
      stopReading(body, pull);
      if (cap.keepWhatArrived) break;
      throw error;
    }
    if (next.done) break;
    const room = cap.maxBytes - total;
    if (next.value.byteLength > room) {
      stopReading(body, pull);
      if (!cap.truncate) throw new BodyTooLargeError(cap.what, cap.maxBytes);
      chunks.push(next.value.subarray(0, room));
      total += room;
      break;
    }
    chunks.push(next.value);
    total += next.value.byteLength;
  }
  // A Uint8Array of its own, not a slice of Buffer's shared pool.
  const all = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return all;
}

/** The body as UTF-8 text (invalid sequences become U+FFFD), capped as `readBoundedBytes`. */
export async function readBoundedText(source: MessageWithBody | ByteStream, cap: BodyCap): Promise<string> {
  return new TextDecoder().decode(await readBoundedBytes(source, cap));
}

function isMessage(source: MessageWithBody | ByteStream): source is MessageWithBody {
  return "headers" in source && "body" in source;
}

interface Puller {
  next(): Promise<IteratorResult<Uint8Array>>;
  /** Stops the iteration: a web reader is cancelled, a Node stream's iterator destroys the stream. */
  stop(): void;
}

function pullerOf(body: ByteStream): Puller {
  if (body instanceof ReadableStream) {
    const reader = body.getReader();
    return {
      next: () => reader.read() as Promise<IteratorResult<Uint8Array>>,
      // Not awaited: cancelling one branch of a tee()d (cloned) body settles only once the other is cancelled too.
      stop: () => void reader.cancel().catch(() => {}),
    };
  }
  const iterator = body[Symbol.asyncIterator]();
  return { next: () => iterator.next(), stop: () => void iterator.return?.()?.catch(() => {}) };
}

/** Drops what was not read: a body still streaming closes its connection rather than drain it. */
function stopReading(body: ByteStream, pull: Puller): void {
  pull.stop();
  if (!(body instanceof ReadableStream) && body.cancel) void body.cancel().catch(() => {});
}
