/** Per-session SSE event store whose event ids name their stream, so POST streams and the standalone GET stream both resume. */
import type { EventId, EventStore, JSONRPCMessage, StreamId } from "@modelcontextprotocol/server";

interface StoredEvent {
  seq: number;
  message: JSONRPCMessage;
}

/** Event id: `<base64url(stream id)>.<sequence>`; the stream is known from the id alone, even for the GET stream. */
export function eventIdFor(streamId: StreamId, seq: number): EventId {
  return `${Buffer.from(streamId).toString("base64url")}.${seq}`;
}

export function parseEventId(eventId: EventId): { streamId: StreamId; seq: number } | null {
  const match = /^([A-Za-z0-9_-]+)\.(\d{1,15})$/.exec(eventId);
  if (!match?.[1] || !match[2]) return null;
  return { streamId: Buffer.from(match[1], "base64url").toString("utf8"), seq: Number(match[2]) };
}

export class ResumableEventStore implements EventStore {
  readonly #streams = new Map<StreamId, StoredEvent[]>();
  /** Request streams whose answer was stored, oldest first: only the newest few are kept for a late resume. */
  readonly #finished = new Set<StreamId>();
  #seq = 0;

  /**
   * Keeps the newest `maxEventsPerStream` events of each stream (older ones cannot be replayed), and of the streams
   * that ended with their answer only the newest `maxFinishedStreams`, so a long session does not grow without end.
   */
  constructor(
    private readonly maxEventsPerStream = 500,
    private readonly maxFinishedStreams = 32,
  ) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    this.#seq += 1;
    const events = this.#streams.get(streamId) ?? [];
    events.push({ seq: this.#seq, message });
    if (events.length > this.maxEventsPerStream) events.splice(0, events.length - this.maxEventsPerStream);
    this.#streams.set(streamId, events);
    // A POST stream ends with the answer to its request; the standalone GET stream never ends this way.
    if ("id" in message && ("result" in message || "error" in message)) this.#finish(streamId);
    return eventIdFor(streamId, this.#seq);
  }

  /** How many streams are kept (for tests and diagnostics). */
  get streamCount(): number {
    return this.#streams.size;
  }

  #finish(streamId: StreamId): void {
    this.#finished.delete(streamId);
    this.#finished.add(streamId);
    while (this.#finished.size > this.maxFinishedStreams) {
      const oldest = this.#finished.values().next().value as StreamId;
      this.#finished.delete(oldest);
      this.#streams.delete(oldest);
    }
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const parsed = parseEventId(eventId);
    return parsed && this.#streams.has(parsed.streamId) ? parsed.streamId : undefined;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const parsed = parseEventId(lastEventId);
    const events = parsed ? this.#streams.get(parsed.streamId) : undefined;
    if (!parsed || !events) throw new Error("Unknown event id");
    for (const event of events) {
      // Priming events carry no JSON-RPC message: nothing to replay.
      if (event.seq > parsed.seq && "jsonrpc" in event.message) {
        await send(eventIdFor(parsed.streamId, event.seq), event.message);
      }
    }
    return parsed.streamId;
  }
}
