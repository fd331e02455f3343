/** The bridge in front of a 2025-era server: face, policy, a translator only for a 2026-07-28 client, then the session upstream. */

import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { type BridgeLog, describeMessage } from "../log/log.js";
import {
  cancelledRequestId,
  isJsonObject as isObject,
  isRequest,
  isResponse,
  type JsonObject as Json,
  requestKey,
} from "../messages/jsonrpc.js";
import {
  type ClientContext,
  clientFromEnvelope,
  type EraRelay,
  requestEra,
  type ToClient,
  withEnvelope,
  withoutEnvelope,
} from "../messages/request-model.js";
import type { StepOutcome } from "../steps/index.js";
import type { ToolPolicy } from "../steps/policy.js";
import {
  ModernClientOverLegacy,
  type ModernClientOverLegacyLimits,
} from "../translate/modern-client-over-legacy.js";
import { settleSteps } from "../translate/tool-call.js";
import { LegacyFace } from "./legacy-face.js";
import { checkedElicitation, RefusedServerInput } from "./server-input.js";

/** What this relay needs of the session upstream (`upstream/legacy`'s Relay): messages in, its answers to `toClient`. */
export type SessionUpstream = EraRelay & { start(): Promise<void> };

export interface LegacyServerRelayOptions {
  /** Opens the session upstream; everything it says for the client goes to `toBridge`. */
  openUpstream(toBridge: ToClient): SessionUpstream;
  toClient: ToClient;
  log: BridgeLog;
  policy: ToolPolicy;
  /** Bounds of the translator's held calls (tests shorten them). */
  translatorLimits?: ModernClientOverLegacyLimits;
}

const neverAborted = new AbortController().signal;
/** A call sent as a notification cannot wait for the client's answers. */
const refuseToAsk = (): Promise<never> => Promise.reject(new Error("a notification cannot ask the client"));

/** Client to server: the face, the policy, the translator (a 2026-07-28 client's only), the session; and back. */
export class LegacyServerRelay implements EraRelay {
  readonly #options: LegacyServerRelayOptions;
  readonly #face: LegacyFace;
  readonly #upstream: SessionUpstream;
  /** Made for the first 2026-07-28 request; the server's messages go through it from then on. */
  #translator: ModernClientOverLegacy | undefined;
  #toTranslator: ToClient | undefined;
  /** What follows a 2026-07-28 client's call once answered (`onResult` of the steps), by the client's request id. */
  readonly #followers = new Map<string, (result: Json) => void>();
  /** tools/calls the steps are judging, by client id: a cancellation aborts them (unsent, questions withdrawn). */
  readonly #judging = new Map<string, AbortController>();
  /** The tools/list requests in flight, by id: their answers pass the policy. */
  readonly #lists = new Set<string>();
  #closing = false;

  constructor(options: LegacyServerRelayOptions) {
    this.#options = options;
    this.#face = new LegacyFace((message, raw, related) => this.#toClientSide(message, raw, related));
    this.#upstream = options.openUpstream((message, raw, related) => this.#fromServer(message, raw, related));
  }

  start(): Promise<void> {
    return this.#upstream.start();
  }

  /** A message from the local client. */
  fromClient(message: JSONRPCMessage): void {
    if (this.#closing) return;
    const value = message as Json;
    const method = typeof value.method === "string" ? value.method : undefined;
    if (method !== undefined && "id" in value && requestEra(method, value.params) === "modern") {
      if (method === "tools/call" && this.#options.policy.steps.length > 0)
        void this.#modernCall(value.id as RequestId, value.params);
      else this.#translatorFor().fromClient(message);
      return;
    }
    const cancelled = method === "notifications/cancelled" ? cancelledRequestId(value.params) : undefined;
    const judged = cancelled === undefined ? undefined : this.#judging.get(requestKey(cancelled));
    if (judged) {
      judged.abort();
      return;
    }
    if (method === "notifications/cancelled" && this.#translator) {
      if (cancelled !== undefined) this.#followers.delete(requestKey(cancelled));
      this.#translator.fromClient(message);
      return;
    }
    this.#toSession(message);
  }

  /** A 2026-07-28 client's tools/call: judged as sent, then carried by the translator (its rounds the step sees). */
  async #modernCall(id: RequestId, params: unknown): Promise<void> {
    const client = clientFromEnvelope(params);
    const message = { jsonrpc: "2.0", id, method: "tools/call", params } as JSONRPCMessage;
    const outcome = await this.#judged(message, client, isObject(params) ? withoutEnvelope(params) : params);
    if (!outcome) return;
    if (outcome.kind !== "forward") return this.#answerLocally(message, outcome, this.#options.toClient);
    if (outcome.onResult) this.#followers.set(requestKey(id), outcome.onResult);
    this.#translatorFor().fromClient({
      ...message,
      params: withEnvelope(outcome.params, client, client.protocolVersion),
    } as JSONRPCMessage);
  }

  async close(timeoutMs?: number): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    await this.#translator?.close();
    this.#face.close();
    await this.#upstream.close(timeoutMs);
  }

  #translatorFor(): ModernClientOverLegacy {
    this.#translator ??= new ModernClientOverLegacy(
      (toTranslator) => {
        this.#toTranslator = toTranslator;
        // Its requests have passed the policy already. Its close ends nothing below it: this relay closes the session.
        return { fromClient: (message) => this.#onward(message), close: () => {} };
      },
      (message, raw, related) => this.#fromTranslator(message, raw, related),
      this.#options.log,
      this.#options.translatorLimits,
    );
    return this.#translator;
  }

  /** Toward the session: the face keeps what it must, the policy judges each tools/call. */
  #toSession(message: JSONRPCMessage): void {
    if (isResponse(message) && this.#face.onClientResponse(message as Json)) return;
    if ("method" in message && message.method === "tools/call" && this.#options.policy.steps.length > 0) {
      void this.#throughSteps(message);
      return;
    }
    this.#onward(message);
  }

  /** A 2025 client's tools/call: forwarded as the steps rewrote it, or answered here (an approval covers one call). */
  async #throughSteps(message: JSONRPCMessage): Promise<void> {
    const params = (message as { params?: unknown }).params;
    const outcome = await this.#judged(message, this.#face.client, params);
    if (!outcome) return;
    if (outcome.kind !== "forward")
      return this.#answerLocally(message, outcome, (reply) => this.#toClientSide(reply));
    this.#onward({ ...message, params: outcome.params } as JSONRPCMessage);
  }

  /** The steps' outcome for a tools/call, or undefined when the relay closed or the client cancelled it meanwhile. */
  async #judged(
    message: JSONRPCMessage,
    client: ClientContext,
    params: unknown,
  ): Promise<StepOutcome | undefined> {
    const steps = this.#options.policy.steps;
    const call = { params, client, notification: !isRequest(message) };
    if (!isRequest(message)) {
      const outcome = await settleSteps(steps, call, refuseToAsk, neverAborted);
      return this.#closing ? undefined : outcome;
    }
    const key = requestKey(message.id);
    const judging = new AbortController();
    this.#judging.set(key, judging);
    try {
      const outcome = await settleSteps(steps, call, this.#face.ask.bind(this.#face), judging.signal);
      if (this.#closing) return undefined;
      if (!judging.signal.aborted) return outcome;
      this.#options.log.debug(
        `${describeMessage(message)} was cancelled by the client while judged: not sent`,
      );
      return undefined;
    } finally {
      if (this.#judging.get(key) === judging) this.#judging.delete(key);
    }
  }

  /** A call the steps did not forward: answered with their error or result; a notification's is dropped. */
  #answerLocally(
    message: JSONRPCMessage,
    outcome: Exclude<StepOutcome, { kind: "forward" }>,
    toClient: ToClient,
  ): void {
    // Only a call sent as a notification is dropped (see confirm-tool.ts): it has no id to answer.
    if (!isRequest(message) || outcome.kind === "drop") {
      this.#options.log.debug(
        `dropped ${describeMessage(message)}: a tool the bridge refuses, sent with no id to answer`,
      );
      return;
    }
    this.#options.log.debug(`answered ${describeMessage(message)} locally (${outcome.kind})`);
    const body = outcome.kind === "error" ? { error: outcome.error } : { result: outcome.result };
    toClient({ jsonrpc: "2.0", id: message.id, ...body } as JSONRPCMessage);
  }

  #onward(message: JSONRPCMessage): void {
    if (isRequest(message)) {
      if (message.method === "initialize") this.#face.initialize(message.params);
      if (message.method === "logging/setLevel") this.#face.setLogLevel(message.params);
      if (message.method === "tools/list") this.#lists.add(requestKey(message.id));
    }
    this.#upstream.fromClient(message);
  }

  /** From the session: a tools/list answer as the policy shows it, then on to the client. */
  #fromServer(message: JSONRPCMessage, raw?: string, related?: RequestId): void {
    const value = message as Json;
    if (value.method === "elicitation/create" && "id" in value && isObject(value.params)) {
      let params: Json;
      try {
        params = checkedElicitation(value.params);
      } catch (error) {
        if (!(error instanceof RefusedServerInput)) throw error;
        this.#options.log.info(`refused the server's elicitation/create: ${error.message}`);
        const refusal = { code: -32602, message: `chat-mcp-bridge: refused: ${error.message}` };
        this.#upstream.fromClient({ jsonrpc: "2.0", id: value.id, error: refusal } as JSONRPCMessage);
        return;
      }
      if (params !== value.params) {
        this.#toClientSide({ ...value, params } as JSONRPCMessage, undefined, related);
        return;
      }
    }
    if (isResponse(message) && this.#lists.delete(requestKey(message.id)) && "result" in message) {
      const shown = this.#options.policy.listed(message.result, this.#face.client);
      // Written anew when the policy changed it: the raw text is the server's whole list.
      if (shown !== message.result) {
        this.#toClientSide({ ...message, result: shown } as JSONRPCMessage);
        return;
      }
    }
    this.#toClientSide(message, raw, related);
  }

  /** The translator's message for the client: an answer to a call a step follows is shown to the step first. */
  #fromTranslator(message: JSONRPCMessage, raw?: string, related?: RequestId): void {
    if (isResponse(message)) {
      const key = requestKey(message.id);
      const follow = this.#followers.get(key);
      this.#followers.delete(key);
      if (follow && "result" in message && isObject(message.result)) follow(message.result);
    }
    this.#options.toClient(message, raw, related);
  }

  #toClientSide(message: JSONRPCMessage, raw?: string, related?: RequestId): void {
    if (this.#toTranslator) this.#toTranslator(message, raw, related);
    else this.#options.toClient(message, raw, related);
  }
}
