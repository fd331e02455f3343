/** The bridge's log: one prefixed stderr line per event (details only with --debug, nothing but fatal errors with --silent), optionally a log file too; never a secret. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { redact, redactForTerminal } from "../../internal/redact.js";
import type { LogFile } from "./log-file.js";

export interface BridgeLog {
  info(message: string): void;
  debug(message: string): void;
  /** True when debug lines go somewhere (stderr with --debug, or a log file): callers skip building them otherwise. */
  readonly debugEnabled: boolean;
  /** A fatal error, for the log file only: the bin itself prints it on stderr as it exits. */
  fatal?(message: string): void;
}

export interface BridgeLogOptions {
  debug: boolean;
  /** `--silent`: nothing on stderr (fatal errors are written by the bin itself). */
  silent?: boolean;
  /** Receives every event, details included. */
  file?: LogFile;
  /** Where stderr lines go (stdout belongs to the protocol). */
  write?: (line: string) => void;
}

/** A log that writes to stderr and, when given, to a log file. */
export function createBridgeLog(options: BridgeLogOptions): BridgeLog {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const { file } = options;
  const infoToStderr = options.silent !== true;
  const debugToStderr = options.debug && infoToStderr;
  return {
    debugEnabled: debugToStderr || file !== undefined,
    info: (message) => {
      if (infoToStderr) write(`chat-mcp-bridge: ${redactForTerminal(message)}\n`);
      file?.write("info", redact(message));
    },
    debug: (message) => {
      if (debugToStderr) write(`chat-mcp-bridge [debug] ${redactForTerminal(message)}\n`);
      file?.write("debug", redact(message));
    },
    fatal: (message) => file?.write("fatal", redact(message)),
  };
}

/** A short, redacted description of an error, with its cause's code when it has one (e.g. ECONNREFUSED). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return redact(String(error));
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message;
  return redact(detail && !error.message.includes(detail) ? `${error.message} (${detail})` : error.message);
}

/** Method and id only: message contents stay out of logs. */
export function describeMessage(message: JSONRPCMessage): string {
  if ("method" in message) {
    const tool = message.method === "tools/call" ? toolNameOf(message.params) : "";
    return "id" in message ? `${message.method}${tool} #${String(message.id)}` : `${message.method}${tool}`;
  }
  return "error" in message ? `error #${String(message.id)}` : `result #${String(message.id)}`;
}

/** ` "<name>"` of a tools/call (quoted, cut at 100 characters: it is the client's text), or "" without one. */
function toolNameOf(params: unknown): string {
  const name = (params as { name?: unknown } | undefined)?.name;
  return typeof name === "string" ? ` ${JSON.stringify(name.slice(0, 100))}` : "";
}
