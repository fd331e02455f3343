/** JSON-RPC 2.0 message checks with the same rules as the MCP SDK's `JSONRPCMessageSchema` (strict objects),
 * written out by hand so the bridge starts without loading zod (test/bridge/jsonrpc.test.ts keeps them equal);
 * the bridge's own request ids, told apart from any client's, and the one map key for a request id.
 */

import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";

/** A JSON object as read off the wire, before any schema narrows it. */
export type JsonObject = Record<string, unknown>;

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isRequestId = (value: unknown): value is RequestId =>
  typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
const onlyKeys = (value: JsonObject, allowed: readonly string[]) =>
  Object.keys(value).every((key) => allowed.includes(key));

const REQUEST_KEYS = ["jsonrpc", "id", "method", "params"] as const;
const NOTIFICATION_KEYS = ["jsonrpc", "method", "params"] as const;
const RESULT_KEYS = ["jsonrpc", "id", "result"] as const;
const ERROR_KEYS = ["jsonrpc", "id", "error"] as const;

const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** `_meta` of params and results: an object with an optional progress token and related task. */
function validMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!isJsonObject(meta)) return false;
  if (meta.progressToken !== undefined && !isRequestId(meta.progressToken)) return false;
  const task = meta[RELATED_TASK];
  return task === undefined || (isJsonObject(task) && typeof task.taskId === "string");
}

/** Params of requests and notifications (and results): an object whose `_meta` is valid. */
const validParams = (params: unknown): boolean =>
  params === undefined || (isJsonObject(params) && validMeta(params._meta));

/** True when `value` is a JSON-RPC request, notification, result or error response as MCP defines them. */
export function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  if (!isJsonObject(value) || value.jsonrpc !== "2.0") return false;
  if ("method" in value) {
    if (typeof value.method !== "string" || !validParams(value.params)) return false;
    return "id" in value
      ? isRequestId(value.id) && onlyKeys(value, REQUEST_KEYS)
      : onlyKeys(value, NOTIFICATION_KEYS);
  }
  if ("result" in value) {
    return (
      isRequestId(value.id) &&
      isJsonObject(value.result) &&
      validMeta(value.result._meta) &&
      onlyKeys(value, RESULT_KEYS)
    );
  }
  if ("error" in value) {
    const error = value.error;
    return (
      (value.id === undefined || isRequestId(value.id)) &&
      isJsonObject(error) &&
      Number.isSafeInteger(error.code) &&
      typeof error.message === "string" &&
      onlyKeys(value, ERROR_KEYS)
    );
  }
  return false;
}

export const isRequest = (
  message: JSONRPCMessage,
): message is Extract<JSONRPCMessage, { method: string; id: RequestId }> =>
  "method" in message && "id" in message;

/** The request a `notifications/cancelled`'s params name, when they name one. */
export function cancelledRequestId(params: unknown): RequestId | undefined {
  const requestId = isJsonObject(params) ? params.requestId : undefined;
  return typeof requestId === "string" || typeof requestId === "number" ? requestId : undefined;
}

/** A response (result or error) that names the request it answers. */
export const isResponse = (
  message: JSONRPCMessage,
): message is Extract<JSONRPCMessage, { id?: RequestId }> & { id: RequestId } =>
  !("method" in message) && message.id !== undefined;

/** A random part per process: a client id (any string) can never be mistaken for one the bridge minted. */
const PROCESS_PREFIX = `chat-mcp-bridge/${randomUUID()}/`;

/** A map key for a request id (or progress token): the number 1 and the string "1" are different requests. */
export const requestKey = (id: unknown): string => (typeof id === "number" ? `n${id}` : `s${String(id)}`);

/** Mints the bridge's ids for one purpose (`<process prefix><purpose>/<n>`), and knows them again. */
export class BridgeRequestIds {
  readonly #prefix: string;
  #count = 0;

  constructor(purpose: string) {
    this.#prefix = `${PROCESS_PREFIX}${purpose}/`;
  }

  next(): string {
    return `${this.#prefix}${++this.#count}`;
  }

  /** Whether `id` was minted for this purpose (by this minter or another of the same purpose). */
  owns(id: unknown): id is string {
    return typeof id === "string" && id.startsWith(this.#prefix);
  }
}
