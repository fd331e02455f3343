/** One line from the client: parsed into a JSON-RPC message, or the error to answer it with. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { isJsonRpcMessage } from "../messages/jsonrpc.js";
import { DEFAULT_MAX_MESSAGE_BYTES, jsonShapeProblem, tooLargeText } from "../messages/message-size.js";
import { type OversizedLineFields, TopLevelFieldScanner } from "./line-splitter.js";

/** A parse failure answered on stdout: JSON-RPC allows `id: null` when the request's id is unknown. */
export interface LineError {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string };
}

/** Parses one stdin line into a JSON-RPC message, or the error to answer it with (`maxBytes`: --max-message-size). */
export function parseClientLine(
  line: string,
  maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
): { message: JSONRPCMessage } | { error: LineError } {
  const problem = jsonShapeProblem(line, maxBytes);
  if (problem) {
    // Its id, read without parsing it, so that a request is answered rather than left waiting.
    const scanner = new TopLevelFieldScanner();
    scanner.push(Buffer.from(line));
    const { id } = scanner.fields();
    return { error: lineError(id ?? null, -32600, `Invalid Request: a message ${problem}`) };
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { error: lineError(null, -32700, `Parse error: ${(error as Error).message}`) };
  }
  if (!isJsonRpcMessage(value)) {
    const id = (value as { id?: unknown } | null)?.id;
    const knownId = typeof id === "string" || typeof id === "number" ? id : null;
    return { error: lineError(knownId, -32600, "Invalid Request: not a JSON-RPC 2.0 message") };
  }
  // The original object goes on, so fields inside params and results are relayed untouched.
  return { message: value };
}

export function lineError(id: string | number | null, code: number, message: string): LineError {
  return { jsonrpc: "2.0", id, error: { code, message: `chat-mcp-bridge: ${message}` } };
}

/**
 * The answer to a message from the client over the cap: its request gets an error naming the flag; a notification or
 * an answer cannot be answered (said in the log only); a line whose id could not be read gets `id: null`.
 */
export function oversizedLineAnswer(
  bytes: number,
  fields: OversizedLineFields,
  maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
): LineError | undefined {
  if (fields.id === undefined && fields.hasMethod) return undefined;
  if (fields.id !== undefined && !fields.hasMethod) return undefined;
  return lineError(
    fields.id ?? null,
    -32600,
    `the message was not sent to the server: ${tooLargeText(maxBytes, bytes)}`,
  );
}
