/**
 * Newline-delimited framing of stdio: stdin split into lines (partial lines joined, over-long lines skipped
 * without buffering them), and messages written to stdout as lines, those of one event-loop turn in one write.
 */

/** Longest line the bridge accepts; MCP messages are far smaller, and this bounds memory per client. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

export interface LineHandlers {
  onLine(line: string): void;
  /** A line longer than the cap was skipped (its bytes were dropped as they arrived). */
  onOversizedLine(bytes: number): void;
}

/** Splits a byte stream into lines; feed it chunks in order. */
export class LineSplitter {
  readonly #handlers: LineHandlers;
  readonly #maxBytes: number;
  #pieces: Buffer[] = [];
  #bufferedBytes = 0;
  /** Bytes of the current over-long line seen so far, or -1 when not skipping one. */
  #skippedBytes = -1;

  constructor(handlers: LineHandlers, maxBytes = MAX_LINE_BYTES) {
    this.#handlers = handlers;
    this.#maxBytes = maxBytes;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.#skippedBytes >= 0) {
        this.#skippedBytes += end - start;
      } else if (this.#bufferedBytes + (end - start) > this.#maxBytes) {
        this.#skippedBytes = this.#bufferedBytes + (end - start);
        this.#pieces = [];
        this.#bufferedBytes = 0;
      } else if (newline !== -1 && this.#bufferedBytes === 0) {
        this.#emit(chunk.toString("utf8", start, end));
      } else {
        this.#pieces.push(chunk.subarray(start, end));
        this.#bufferedBytes += end - start;
        if (newline !== -1) {
          const line = Buffer.concat(this.#pieces, this.#bufferedBytes).toString("utf8");
          this.#pieces = [];
          this.#bufferedBytes = 0;
          this.#emit(line);
        }
      }
      if (newline === -1) return;
      if (this.#skippedBytes >= 0) {
        this.#handlers.onOversizedLine(this.#skippedBytes);
        this.#skippedBytes = -1;
      }
      start = newline + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    if (this.#skippedBytes >= 0) this.#handlers.onOversizedLine(this.#skippedBytes);
    else if (this.#bufferedBytes > 0)
      this.#emit(Buffer.concat(this.#pieces, this.#bufferedBytes).toString("utf8"));
    this.#pieces = [];
    this.#bufferedBytes = 0;
    this.#skippedBytes = -1;
  }

  #emit(line: string): void {
    const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (trimmed.trim() !== "") this.#handlers.onLine(trimmed);
  }
}

/** Where lines go: stdout, or any writable stream. */
export interface LineSink {
  write(text: string): unknown;
}

/** Writes messages as JSON lines; `flush()` writes what is queued now (call it before `process.exit`). */
export interface LineWriter {
  /**
   * `raw`: the message's JSON text exactly as received, written as is (line breaks between tokens become
   * spaces) instead of serialising `message` again, which can fail (nesting too deep for JSON.stringify).
   */
  (message: unknown, raw?: string): void;
  flush(): void;
}

/** JSON-RPC error code of the bridge's own failures (also `BRIDGE_ERROR_CODE` of the relay). */
const BRIDGE_FAILURE = -32000;

/**
 * A line writer that joins the lines queued during one turn of the event loop into a single write, in the
 * order they were queued. stdout on a pipe writes synchronously, so one write per message is one system call
 * per message; under load, many answers arrive in the same turn.
 */
export function createLineWriter(
  sink: LineSink,
  onUnwritable: (reason: string) => void = () => {},
): LineWriter {
  let queued = "";
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (queued === "") return;
    const text = queued;
    queued = "";
    sink.write(text);
  };
  const write = (message: unknown, raw?: string) => {
    const line = raw !== undefined ? oneLine(raw) : serialised(message, onUnwritable);
    if (line === undefined) return;
    queued += `${line}\n`;
    scheduled ??= setImmediate(flush);
  };
  return Object.assign(write, { flush });
}

/** In valid JSON a line break can only stand between tokens, where a space means the same. */
function oneLine(json: string): string {
  return json.includes("\n") || json.includes("\r") ? json.replace(/[\r\n]+/g, " ") : json;
}

/**
 * The message as one line. When it cannot be serialised, an answer becomes an error answer to the same id (the
 * request is still answered exactly once) and anything else is dropped, said through `onUnwritable`.
 */
function serialised(message: unknown, onUnwritable: (reason: string) => void): string | undefined {
  try {
    return JSON.stringify(message);
  } catch (error) {
    const why = (error as Error).message;
    const { id } = (message ?? {}) as { id?: unknown };
    const isAnswer =
      (typeof id === "string" || typeof id === "number") &&
      ("result" in (message as object) || "error" in (message as object));
    onUnwritable(
      `a message could not be written (${why}); ${isAnswer ? "answered with an error" : "dropped"}`,
    );
    if (!isAnswer) return undefined;
    return JSON.stringify({
      jsonrpc: "2.0",
      id,
      error: {
        code: BRIDGE_FAILURE,
        message: `chat-mcp-bridge: the server's answer could not be relayed (${why})`,
      },
    });
  }
}
