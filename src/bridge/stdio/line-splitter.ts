/** stdin framing: a byte stream split into newline-delimited lines, over-long lines skipped without buffering them (their `id` and `method` read as they stream past, so they can be answered). */
import { DEFAULT_MAX_MESSAGE_BYTES } from "../messages/message-size.js";

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

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
/** Longest `id` value kept: JSON-RPC ids are short; a longer one is not answered. */
const MAX_ID_BYTES = 1024;

/** What an over-long line was, as far as it tells: a request (method and id), or not answerable. */
export interface OversizedLineFields {
  id?: string | number;
  hasMethod: boolean;
}

/**
 * Scans a JSON object's bytes, in pieces, for its own `id` and `method` members (never those nested in `params`),
 * keeping no more than the id: a linear pass that holds none of the line.
 */
export class TopLevelFieldScanner {
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** At depth 1, after `{` or `,`: the next string is a member name. */
  #expectingName = false;
  #stringIsName = false;
  /** The member name being read (only short names matter), then the one whose value follows. */
  #name = "";
  #valueOf = "";
  /** The bytes of the top-level `id` value while it is read. */
  #idBytes: number[] | undefined;
  #idDone = false;
  #hasMethod = false;

  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i] as number;
      if (this.#inString) {
        if (this.#idBytes && !this.#idDone) this.#keepIdByte(byte);
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) this.#escaped = true;
        else if (byte === QUOTE) {
          this.#inString = false;
          if (this.#stringIsName) {
            this.#valueOf = this.#name;
            if (this.#name === "method") this.#hasMethod = true;
          } else if (this.#idBytes) this.#idDone = true;
        } else if (this.#stringIsName && this.#name.length < 8) this.#name += String.fromCharCode(byte);
        continue;
      }
      if (this.#depth !== 1) {
        if (byte === QUOTE) this.#inString = true;
        else if (byte === 123 || byte === 91) {
          this.#depth++;
          if (this.#depth === 1) this.#expectingName = byte === 123;
        } else if (byte === 125 || byte === 93) this.#depth--;
        continue;
      }
      // Depth 1: the members of the line's own object.
      if (byte === QUOTE) {
        this.#inString = true;
        this.#stringIsName = this.#expectingName;
        this.#name = "";
        if (!this.#stringIsName && this.#valueOf === "id" && !this.#idBytes) this.#keepIdByte(byte);
      } else if (byte === COLON) {
        this.#expectingName = false;
      } else if (byte === COMMA || byte === 125) {
        if (this.#idBytes) this.#idDone = true;
        this.#expectingName = true;
        this.#valueOf = "";
        if (byte === 125) this.#depth--;
      } else if (byte === 123 || byte === 91) {
        this.#depth++;
      } else if (this.#valueOf === "id" && !this.#idDone && byte > 32) {
        this.#keepIdByte(byte);
      }
    }
  }

  /** The line's top-level `id` (a string or number) and whether it has a `method`. */
  fields(): OversizedLineFields {
    const fields: OversizedLineFields = { hasMethod: this.#hasMethod };
    if (!this.#idBytes || this.#idBytes.length > MAX_ID_BYTES) return fields;
    try {
      const id: unknown = JSON.parse(Buffer.from(this.#idBytes).toString("utf8"));
      if (typeof id === "string" || typeof id === "number") fields.id = id;
    } catch {
      // Not a JSON string or number: an id the bridge cannot name, so the line is not answered.
    }
    return fields;
  }

  #keepIdByte(byte: number): void {
    this.#idBytes ??= [];
    if (this.#idBytes.length <= MAX_ID_BYTES) this.#idBytes.push(byte);
  }
}
