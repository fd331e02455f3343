/** Where an `input_required` result becomes real server-to-client requests for a legacy client, and their answers `inputResponses`. */
import { isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";
import type { ClientContext } from "../messages/request-model.js";

/** Rounds of input one call may take before the bridge gives up (the SDK's legacy shim allows 8 too). */
export const MAX_INPUT_ROUNDS = 8;

/** Sends one request to the stdio client and resolves with its result (rejects with its error or on timeout). */
export type AskClient = (method: string, params: Json, signal: AbortSignal) => Promise<Json>;

/** A request the bridge cannot put to this client: the JSON-RPC error to answer the call with. */
export class UntranslatableInputError extends Error {
  override readonly name = "UntranslatableInputError";
}

export function isInputRequiredResult(result: Json): boolean {
  return result.resultType === "input_required";
}

/** Why the client cannot be asked this request (it did not declare the capability, or it has no legacy form); undefined when it can. */
export function refusalFor(method: string, params: Json, client: ClientContext): string | undefined {
  const capabilities = client.capabilities as Json;
  if (method === "elicitation/create") {
    const elicitation = capabilities.elicitation;
    if (!isObject(elicitation)) return "the client did not declare the elicitation capability";
    if (params.mode === "url")
      return "URL-mode elicitation has no translation for a 2025-era client through the bridge (its completion notification cannot be bridged)";
    // A bare `elicitation: {}` means form support (the meaning before modes existed).
    if (Object.keys(elicitation).length > 0 && !isObject(elicitation.form))
      return "the client declared elicitation without form mode";
    return undefined;
  }
  if (method === "sampling/createMessage")
    return isObject(capabilities.sampling) ? undefined : "the client did not declare the sampling capability";
  if (method === "roots/list")
    return isObject(capabilities.roots) ? undefined : "the client did not declare the roots capability";
  return `the server asked for ${JSON.stringify(method)}, which is not a request a client answers`;
}

/**
 * Puts every request of `inputRequests` to the client (all at once, as the client would see them from a 2025
 * server) and returns the map of answers by key. A request the client cannot take fails the whole call.
 */
export async function fulfilInputRequests(
  inputRequests: unknown,
  client: ClientContext,
  ask: AskClient,
  signal: AbortSignal,
): Promise<Json> {
  if (!isObject(inputRequests)) return {};
  const entries = Object.entries(inputRequests);
  for (const [key, request] of entries) {
    if (!isObject(request) || typeof request.method !== "string")
      throw new UntranslatableInputError(`the server's input request ${JSON.stringify(key)} is malformed`);
    const refusal = refusalFor(request.method, isObject(request.params) ? request.params : {}, client);
    if (refusal) throw new UntranslatableInputError(`cannot ask the client for input: ${refusal}`);
  }
  const answers = await Promise.all(
    entries.map(async ([key, request]) => {
      const { method, params } = request as { method: string; params?: unknown };
      return [key, await ask(method, isObject(params) ? params : {}, signal)] as const;
    }),
  );
  return Object.fromEntries(answers);
}

/** A result as a 2025-era client expects it: without the 2026 `resultType` and cache members (`ttlMs`, `cacheScope`). */
export function asLegacyResult(result: Json): Json {
  if (!("resultType" in result) && !("ttlMs" in result) && !("cacheScope" in result)) return result;
  const { resultType: _resultType, ttlMs: _ttlMs, cacheScope: _cacheScope, ...rest } = result;
  return rest;
}
