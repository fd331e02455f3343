/** stdin framing: a byte stream split into newline-delimited lines, over-long lines skipped without buffering them. */

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
