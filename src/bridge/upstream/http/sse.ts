/** The one `text/event-stream` parser of both upstreams: eventsource-parser v3, fed decoded text, events with their last id. */
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

/**
 * Bytes in, events out. The first decoder strips a byte order mark at the stream's start (and only there); the
 * parser keeps a line split across chunks, and a character split across chunks waits in the decoder.
 */
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

/** Parses a `text/event-stream` body into its events. */
export async function* parseServerSentEvents(
  body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>,
): AsyncGenerator<ServerSentEvent> {
  let events: ServerSentEvent[] = [];
  const parser = new ServerSentEventParser({ onEvent: (event) => events.push(event) });
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    parser.push(chunk);
    const ready = events;
    events = [];
    yield* ready;
  }
}
