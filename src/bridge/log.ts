/** The bridge's stderr log: one prefixed line per event, details only with --debug, never a secret. */
import { redact, redactForTerminal } from "../internal/redact.js";

export interface BridgeLog {
  info(message: string): void;
  debug(message: string): void;
  readonly debugEnabled: boolean;
}

/** A log that writes to stderr (stdout belongs to the protocol). */
export function createBridgeLog(
  debugEnabled: boolean,
  write = (line: string) => process.stderr.write(line),
): BridgeLog {
  return {
    debugEnabled,
    info: (message) => write(`chat-mcp-bridge: ${redactForTerminal(message)}\n`),
    debug: (message) => {
      if (debugEnabled) write(`chat-mcp-bridge [debug] ${redactForTerminal(message)}\n`);
    },
  };
}

/** A short, redacted description of an error, with its cause's code when it has one (e.g. ECONNREFUSED). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return redact(String(error));
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message;
  return redact(detail && !error.message.includes(detail) ? `${error.message} (${detail})` : error.message);
}
