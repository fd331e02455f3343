/** stdout framing: messages written as JSON lines, those of one event-loop turn in one write. */

export interface LineSink {
  write(text: string): unknown;
}

/** Writes messages as JSON lines; `flush()` writes what is queued now (call it before `process.exit`). */
export interface LineWriter {
  /** `raw`: the JSON text as received, written as is (serialising it again can fail: nesting too deep). */
  (message: unknown, raw?: string): void;
  flush(): void;
}

/** JSON-RPC error code of the bridge's own failures (also `BRIDGE_ERROR_CODE` of the relay). */
const BRIDGE_FAILURE = -32000;

/**
 * Joins the lines queued during one turn of the event loop into one write, in order: stdout on a pipe writes
 * synchronously, one system call per write, and under load many answers arrive in the same turn.
 */
export function createLineWriter(
  sink: LineSink,
  onUnwritable: (reason: string) => void = () => {},
): LineWriter {
  let queued: string[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    if (queued.length === 0) return;
    const lines = queued;
    queued = [];
    lines.push("");
    sink.write(lines.join("\n"));
  };
  const write = (message: unknown, raw?: string) => {
    const line = raw !== undefined ? oneLine(raw) : serialised(message, onUnwritable);
    if (line === undefined) return;
    queued.push(line);
    scheduled ??= setImmediate(flush);
  };
  return Object.assign(write, { flush });
}

/** In valid JSON a line break can only stand between tokens, where a space means the same. */
function oneLine(json: string): string {
  return json.includes("\n") || json.includes("\r") ? json.replace(/[\r\n]+/g, " ") : json;
}

/** The message as one line; one that cannot be serialised is dropped, or an answer becomes an error to its id. */
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
