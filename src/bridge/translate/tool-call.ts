/** A `tools/call` through the steps and rounds of input: where an `input_required` result, a step's or a server's, becomes real requests to a legacy client, and its answers the retry's `inputResponses`. */

import { describeError } from "../log/log.js";
import { isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";
import type { ClientContext } from "../messages/request-model.js";
import {
  runToolCallSteps,
  type StepOutcome,
  type ToolCallContext,
  type ToolCallRequest,
  type ToolCallStep,
} from "../steps/index.js";

type Params = ToolCallContext["params"];

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

/** Puts every request of `inputRequests` to the client at once; one it cannot take fails the whole call. */
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

export type JsonRpcError = { code: number; message: string; data?: unknown };
export type CallAnswer = { result: Json } | { error: JsonRpcError };

/** The retry after a round of input: the original call with this round's answers and the byte-exact state. */
export function retryParams(original: unknown, inputRequired: Json, inputResponses: Json): Json {
  const { inputResponses: _responses, requestState: _state, ...rest } = isObject(original) ? original : {};
  const retry: Json = { ...rest, inputResponses };
  if (typeof inputRequired.requestState === "string") retry.requestState = inputRequired.requestState;
  return retry;
}

/** One round: the input requests put to a legacy client; its answers, or the error that ends the call. */
export async function inputRound(
  inputRequired: Json,
  client: ClientContext,
  ask: AskClient,
  signal: AbortSignal,
): Promise<{ inputResponses: Json } | { error: JsonRpcError }> {
  try {
    return { inputResponses: await fulfilInputRequests(inputRequired.inputRequests, client, ask, signal) };
  } catch (error) {
    return {
      error: {
        code: error instanceof UntranslatableInputError ? -32603 : -32000,
        message: `chat-mcp-bridge: ${describeError(error)}`,
      },
    };
  }
}

const roundsExceeded = (): { error: JsonRpcError } => ({
  error: {
    code: -32000,
    message: `chat-mcp-bridge: the call still needed input after ${MAX_INPUT_ROUNDS} rounds; given up`,
  },
});

/**
 * Runs a call to its end: each round the steps, then `send`. An `input_required` answer (a step's or the server's)
 * goes to a modern client as it is; a legacy client is asked, and the call runs again with the answers.
 */
export async function callTool(
  steps: readonly ToolCallStep[],
  call: ToolCallRequest,
  options: { ask: AskClient; signal: AbortSignal; send: (params: Params) => Promise<CallAnswer> },
): Promise<CallAnswer | { dropped: true }> {
  let params = call.params;
  for (let round = 0; ; round++) {
    const outcome: StepOutcome = await runToolCallSteps(steps, { ...call, params });
    let answer: CallAnswer;
    if (outcome.kind === "forward") {
      answer = await options.send(outcome.params);
      if ("result" in answer) outcome.onResult?.(answer.result);
    } else if (outcome.kind === "error") return { error: outcome.error };
    else if (outcome.kind === "drop") return { dropped: true };
    else answer = { result: outcome.result };
    if (!("result" in answer) || !isInputRequiredResult(answer.result) || call.client.era === "modern")
      return answer;
    if (round + 1 >= MAX_INPUT_ROUNDS) return roundsExceeded();
    const next = await inputRound(answer.result, call.client, options.ask, options.signal);
    if ("error" in next) return next;
    params = retryParams(call.params, answer.result, next.inputResponses);
  }
}

/** The steps alone (a 2025 server asks its own questions): a step's rounds put to a legacy client until they settle. */
export async function settleSteps(
  steps: readonly ToolCallStep[],
  call: ToolCallRequest,
  ask: AskClient,
  signal: AbortSignal,
): Promise<StepOutcome> {
  let params = call.params;
  for (let round = 0; ; round++) {
    const outcome = await runToolCallSteps(steps, { ...call, params });
    if (outcome.kind !== "input_required" || call.client.era === "modern") return outcome;
    if (round + 1 >= MAX_INPUT_ROUNDS) return { kind: "error", ...roundsExceeded() };
    const next = await inputRound(outcome.result, call.client, ask, signal);
    if ("error" in next) return { kind: "error", error: next.error };
    params = retryParams(call.params, outcome.result, next.inputResponses);
  }
}
