/** A `tools/call` through the steps and rounds of input: where a legacy client answers what a step or server asks with `input_required`. */

import { describeError } from "../log/log.js";
import { isJsonObject as isObject } from "../messages/jsonrpc.js";
import type { ClientContext } from "../messages/request-model.js";
import {
  runToolCallSteps,
  type StepOutcome,
  type ToolCallContext,
  type ToolCallRequest,
  type ToolCallStep,
} from "../steps/index.js";
import {
  type AskClient,
  fulfilInputRequests,
  isInputRequiredResult,
  MAX_INPUT_ROUNDS,
  UntranslatableInputError,
} from "./input-required.js";

type Json = Record<string, unknown>;
type Params = ToolCallContext["params"];
export type JsonRpcError = { code: number; message: string; data?: unknown };
/** What a call's server (or the next hop) answered. */
export type CallAnswer = { result: Json } | { error: JsonRpcError };

/**
 * The params of the retry after a round of input: the original call with this round's answers and the byte-exact
 * state. The steps judge the original again on the retry (it is only retried once they have judged it).
 */
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
 * Runs a call to its end. Each round: the steps, then (when they forward) `send` to the server. An
 * `input_required` answer, from a step or the server, goes back to a modern client as it is; a legacy client
 * is asked through real requests, and the call runs again (through the steps) with the answers.
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

/**
 * The steps alone, for a relay whose server answers calls itself (a 2025-era server asks its own questions): a
 * step's `input_required` is put to a legacy client, and the steps run again with the answers, until they
 * forward, answer or refuse. A modern client gets the `input_required` outcome back as it is.
 */
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
