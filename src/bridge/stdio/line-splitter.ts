/** stdin framing: a byte stream split into newline-delimited lines, over-long lines skipped without buffering them. */
import { DEFAULT_MAX_MESSAGE_BYTES } from "../messages/message-size.js";
import { type OversizedLineFields, TopLevelFieldScanner } from "./oversized-line.js";

export interface LineHandlers {
  onLine(line: string): void;
  /** A line longer than the cap was skipped (its bytes were dropped as they arrived); `fields` name its request. */
  onOversizedLine(bytes: number, fields: OversizedLineFields): void;
}

/** Splits a byte stream into lines; feed it chunks in order. */
export class LineSplitter {
  readonly #handlers: LineHandlers;
  readonly #maxBytes: number;
  #pieces: Buffer[] = [];
  #bufferedBytes = 0;
  /** Bytes of the current over-long line seen so far, or -1 when not skipping one. */
  #skippedBytes = -1;
  /** Reads the skipped line's id as its bytes pass, so that its request is answered, not left waiting. */
  #scanner: TopLevelFieldScanner | undefined;

  constructor(handlers: LineHandlers, maxBytes = DEFAULT_MAX_MESSAGE_BYTES) {
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
        this.#scanner?.push(chunk.subarray(start, end));
      } else if (this.#bufferedBytes + (end - start) > this.#maxBytes) {
        this.#skippedBytes = this.#bufferedBytes + (end - start);
        this.#scanner = new TopLevelFieldScanner();
        for (const piece of this.#pieces) this.#scanner.push(piece);
        this.#scanner.push(chunk.subarray(start, end));
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
      if (this.#skippedBytes >= 0) this.#endSkipped();
      start = newline + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    if (this.#skippedBytes >= 0) this.#endSkipped();
    else if (this.#bufferedBytes > 0)
      this.#emit(Buffer.concat(this.#pieces, this.#bufferedBytes).toString("utf8"));
    this.#pieces = [];
    this.#bufferedBytes = 0;
  }

  #endSkipped(): void {
    const bytes = this.#skippedBytes;
    const fields = this.#scanner?.fields() ?? { hasMethod: false };
    this.#skippedBytes = -1;
    this.#scanner = undefined;
    this.#handlers.onOversizedLine(bytes, fields);
  }

  #emit(line: string): void {
    const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (trimmed.trim() !== "") this.#handlers.onLine(trimmed);
  }
}
