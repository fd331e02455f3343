/** The one `text/event-stream` parser of both upstreams (eventsource-parser v3, fed decoded text, events with their last id), and the cap on one event's size applied to the raw bytes before the parser sees (and buffers) them. */
import { createParser, type EventSourceParser } from "eventsource-parser";

export interface ServerSentEvent {
  event?: string;
  data: string;
  /** The stream's last event id when this event was dispatched (the SSE "last event ID buffer"). */
  id?: string;
  /** The `retry` field read since the previous event, if any. */
  retry?: number;
}

export interface ServerSentEventHandlers {
  onEvent(event: ServerSentEvent): void;
  /** A `retry` field, as soon as it is read (also in an event that carries no data). */
  onRetry?(milliseconds: number): void;
}

/** Bytes in, events out: a byte order mark is stripped at the stream's start only; split lines and characters wait. */
export class ServerSentEventParser {
  readonly #parser: EventSourceParser;
  #decoder = new TextDecoder("utf-8");
  #lastEventId: string | undefined;
  #retry: number | undefined;

  constructor(handlers: ServerSentEventHandlers) {
    this.#parser = createParser({
      onEvent: (message) => {
        if (message.id !== undefined) this.#lastEventId = message.id;
        const retry = this.#retry;
        this.#retry = undefined;
        handlers.onEvent({ event: message.event, data: message.data, id: this.#lastEventId, retry });
      },
      onRetry: (milliseconds) => {
        this.#retry = milliseconds;
        handlers.onRetry?.(milliseconds);
      },
    });
  }

  push(chunk: Uint8Array): void {
    const text = this.#decoder.decode(chunk, { stream: true });
    if (text) this.#parser.feed(text);
  }

  /** Forgets the event being read (its bytes were dropped); the next bytes start a new line of a new event. */
  discardEvent(): void {
    this.#decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    this.#parser.reset();
    this.#retry = undefined;
  }
}

/** Where the bytes go: an event over the cap is dropped as its bytes arrive, so a 450 MB event costs no memory. */
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
  #eventBytes = 0;
  #atLineStart = true;
  #afterCarriageReturn = false;
  #skipping = false;

  constructor(maxBytes: number, sink: CappedEventSink) {
    this.#maxBytes = maxBytes;
    this.#sink = sink;
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
