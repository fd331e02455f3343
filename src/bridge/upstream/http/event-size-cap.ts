/** A cap on one server-sent event's size, applied to the raw bytes before an SSE parser sees (and buffers) them. */

// An event over the cap is dropped as its bytes arrive, so a 450 MB event costs no memory.
/** Where the bytes go. */
export interface CappedEventSink {
  /** Bytes to parse, in order (subarrays of the chunks pushed, never copies); `endsEvent` when they end at a blank line. */
  feed(bytes: Uint8Array, endsEvent: boolean): void;
  /** An event went over the cap: drop what the parser holds of it (its first bytes were fed already). */
  discard(): void;
  /** The oversized event ended after `bytes` bytes (it was not parsed). */
  dropped(bytes: number): void;
}

const LF = 10;
const CR = 13;

/** Cuts events over `maxBytes` out of a `text/event-stream` byte stream; an event ends at a blank line. */
export class EventSizeCap {
  readonly #maxBytes: number;
  readonly #sink: CappedEventSink;
  /** Bytes of the current event so far. */
  #eventBytes = 0;
  #atLineStart = true;
  #afterCarriageReturn = false;
  #skipping = false;

  constructor(maxBytes: number, sink: CappedEventSink) {
    this.#maxBytes = maxBytes;
    this.#sink = sink;
  }

  /** True while the bytes of an oversized event are being dropped. */
  get skipping(): boolean {
    return this.#skipping;
  }

  push(chunk: Uint8Array): void {
    const length = chunk.length;
    let segmentStart = 0;
    let position = 0;
    // Most streams use LF only: the next CR is searched for once, and again only after it was passed.
    let carriageReturn = chunk.indexOf(CR);
    while (position < length) {
      if (carriageReturn !== -1 && carriageReturn < position) carriageReturn = chunk.indexOf(CR, position);
      const lineFeed = chunk.indexOf(LF, position);
      const terminator =
        carriageReturn !== -1 && (lineFeed === -1 || carriageReturn < lineFeed) ? carriageReturn : lineFeed;
      if (terminator === -1) {
        // The rest of the chunk is inside a line.
        this.#atLineStart = false;
        this.#afterCarriageReturn = false;
        break;
      }
      if (terminator > position) {
        this.#atLineStart = false;
        this.#afterCarriageReturn = false;
      }
      let blankLine = false;
      if (chunk[terminator] === CR) {
        blankLine = this.#atLineStart;
        this.#afterCarriageReturn = true;
      } else if (this.#afterCarriageReturn) {
        this.#afterCarriageReturn = false;
      } else {
        blankLine = this.#atLineStart;
      }
      this.#atLineStart = true;
      position = terminator + 1;
      if (!blankLine) continue;
      // The event ends here: everything from the segment start to this blank line is part of it.
      const bytes = this.#eventBytes + (position - segmentStart);
      if (this.#skipping) {
        this.#skipping = false;
        this.#sink.dropped(bytes);
      } else if (bytes > this.#maxBytes) {
        this.#sink.discard();
        this.#sink.dropped(bytes);
      } else {
        this.#sink.feed(chunk.subarray(segmentStart, position), true);
      }
      this.#eventBytes = 0;
      segmentStart = position;
    }
    if (segmentStart === length) return;
    this.#eventBytes += length - segmentStart;
    if (this.#skipping) return;
    if (this.#eventBytes > this.#maxBytes) {
      this.#skipping = true;
      this.#sink.discard();
      return;
    }
    this.#sink.feed(segmentStart === 0 ? chunk : chunk.subarray(segmentStart), false);
  }
}
