/** The legacy upstream's server-sent event streams: a POST's answer stream and the standalone GET stream. */
import type { RequestId } from "@modelcontextprotocol/client";
import { jsonShapeProblem, tooLargeText } from "../../messages/message-size.js";
import { type HttpAnswer, RemoteHttpError } from "../http/http-exchange.js";
import { EventSizeCap, ServerSentEventParser } from "../http/sse.js";

export interface StreamState {
  /** Id of the last event seen, to resume from. */
  lastEventId?: string;
  /** Requests whose answer is still expected on this stream. */
  awaiting: Set<RequestId>;
  /** The GET stream for server-initiated messages (always reconnects), not a request's answer stream. */
  standalone: boolean;
  /** Streams in a row that ended without an event: each waits longer before resuming, and there is a bound. */
  emptyStreams?: number;
  /** The request whose POST opened this stream: what the server sends on it relates to that request (2025-11-25). */
  relatedRequestId?: RequestId;
}

export interface EventStreamHost {
  /** True once the transport closed: nothing is resumed or reported after. */
  isClosed(): boolean;
  /** GETs the event stream, resuming after `lastEventId`; `release` once it is over (close aborts it until then). */
  get(lastEventId: string | undefined): { answer: Promise<HttpAnswer>; release(): void };
  /** An event's data, parsed: a message for the client (`raw` its JSON text). */
  deliver(value: unknown, state: StreamState, raw: string): void;
  error(error: Error): void;
  lost(id: RequestId, reason: string): void;
  /** `--max-message-size` in bytes: a larger event is dropped as it arrives. */
  readonly maxMessageBytes: number;
}

const DEFAULT_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
const MAX_GET_RECONNECTS = 8;
/** Streams in a row that closed without a single event before the bridge gives up on resuming (whatever `retry` says). */
const MAX_EMPTY_STREAMS = 4;
/** The first wait after a stream closed without an event; it doubles with each such stream in a row. */
const EMPTY_STREAM_BACKOFF_MS = 250;
/** A stream open this long is a healthy one that idled out (a server's idle timeout), not one that closed at once. */
const HEALTHY_STREAM_MS = MAX_RETRY_MS;

export class EventStreams {
  readonly #host: EventStreamHost;
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Server-chosen reconnection delay (SSE `retry` field). */
  #retryMs: number | undefined;

  constructor(host: EventStreamHost) {
    this.#host = host;
  }

  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  /** The standalone GET stream (405: the server has none); resolves once the GET has its answer or failed. */
  open(state: StreamState = { awaiting: new Set(), standalone: true }, attempt = 0): Promise<void> {
    const { answer, release } = this.#host.get(state.lastEventId);
    const answered = answer.then(
      () => undefined,
      () => undefined,
    );
    void (async () => {
      const response = await answer;
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        if (response.status === 405) return;
        throw new RemoteHttpError(
          response.status,
          `opening the event stream failed with HTTP ${response.status}`,
        );
      }
      await this.read(response, state);
    })()
      .catch((error: unknown) => {
        if (this.#host.isClosed()) return;
        this.#host.error(error as Error);
        const gone = error instanceof RemoteHttpError && error.status < 500;
        if (gone) {
          this.#loseAll(state, `the event stream could not be resumed: ${(error as Error).message}`);
        } else if (attempt < MAX_GET_RECONNECTS) {
          this.#later(() => void this.open(state, attempt + 1), this.#delay(attempt));
        } else {
          this.#loseAll(state, "the event stream could not be resumed");
        }
      })
      .finally(release);
    return answered;
  }

  /**
   * Reads one SSE response. Ended before every awaited answer, it resumes with Last-Event-ID after the `retry` delay
   * when the events had ids (else the answers are lost, and said so); the standalone stream always reconnects.
   */
  async read(response: HttpAnswer, state: StreamState): Promise<void> {
    const host = this.#host;
    // process.hrtime, not `performance`: that global loads perf_hooks (seven modules) on the relay's start path.
    const openedAt = process.hrtime.bigint();
    let events = 0;
    const parser = new ServerSentEventParser({
      onRetry: (milliseconds) => {
        this.#retryMs = milliseconds;
      },
      onEvent: (event) => {
        events++;
        if (event.id !== undefined) state.lastEventId = event.id;
        if (!event.data || (event.event && event.event !== "message")) return;
        const problem = jsonShapeProblem(event.data, host.maxMessageBytes);
        if (problem) {
          if (state.standalone) host.error(new Error(`the server sent an event ${problem}; dropped`));
          else this.#loseAll(state, `the server's answer (${problem}) was not relayed`);
          return;
        }
        let value: unknown;
        try {
          value = JSON.parse(event.data);
        } catch {
          host.error(new Error("the server sent an event that is not JSON; ignored"));
          return;
        }
        host.deliver(value, state, event.data);
      },
    });
    // An event over the cap: on a request's stream its answer is lost (said at once); the GET stream skips it.
    let abandoned = false;
    const cap = new EventSizeCap(host.maxMessageBytes, {
      feed: (bytes) => parser.push(bytes),
      discard: () => {
        parser.discardEvent();
        if (state.standalone) return;
        abandoned = true;
        this.#loseAll(state, `the server's answer was not relayed: ${tooLargeText(host.maxMessageBytes)}`);
      },
      dropped: (bytes) =>
        host.error(
          new Error(
            `the server sent an event that was dropped: ${tooLargeText(host.maxMessageBytes, bytes)}`,
          ),
        ),
    });
    let failure: unknown;
    try {
      for await (const chunk of response.body!) {
        cap.push(chunk);
        if (abandoned) break;
      }
    } catch (error) {
      failure = error;
    }
    if (abandoned) await response.body?.cancel().catch(() => undefined);
    if (host.isClosed()) return;
    if (failure) host.error(new Error(`the event stream broke: ${(failure as Error).message ?? failure}`));
    // A stream that closes at once, again and again (`retry: 0` with nothing to send): back off, then give up.
    const openMs = Number(process.hrtime.bigint() - openedAt) / 1e6;
    const healthy = events > 0 || openMs >= HEALTHY_STREAM_MS;
    const empty = healthy ? 0 : (state.emptyStreams ?? 0) + 1;
    state.emptyStreams = empty;
    // A request's answer stream gives up (its answer is not coming); the standalone stream only backs off.
    if (empty > MAX_EMPTY_STREAMS && !state.standalone) {
      host.error(new Error(`the event stream closed without an event ${empty} times in a row; not resumed`));
      this.#loseAll(state, `the server closed the event stream without an event ${empty} times in a row`);
      return;
    }
    const resume = () =>
      this.#later(() => this.open(state, 0), Math.max(this.#delay(0), emptyStreamDelay(empty)));
    if (state.standalone) {
      resume();
    } else if (state.awaiting.size > 0) {
      if (state.lastEventId) resume();
      else this.#loseAll(state, "the server closed the response stream before answering");
    }
  }

  #loseAll(state: StreamState, reason: string): void {
    for (const id of state.awaiting) this.#host.lost(id, reason);
    state.awaiting.clear();
  }

  #delay(attempt: number): number {
    return this.#retryMs ?? Math.min(DEFAULT_RETRY_MS * 2 ** attempt, MAX_RETRY_MS);
  }

  #later(task: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#host.isClosed()) task();
    }, ms);
    this.#timers.add(timer);
  }
}

/** The least wait before resuming after `empty` streams in a row without an event: none after a stream with one. */
function emptyStreamDelay(empty: number): number {
  return empty === 0 ? 0 : Math.min(EMPTY_STREAM_BACKOFF_MS * 2 ** (empty - 1), MAX_RETRY_MS);
}
