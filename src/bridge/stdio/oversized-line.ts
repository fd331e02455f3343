/** The `id` and `method` of a line too long to keep, read from its bytes as they stream past: so it can be answered. */

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
