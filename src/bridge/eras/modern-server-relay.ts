/** The bridge in front of a modern (2026-07-28) server: both faces in, one stateless upstream out, steps between. */

import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import { type BridgeLog, describeError } from "../log/log.js";
import {
  cancelledRequestId,
  isJsonObject as isObject,
  type JsonObject as Json,
  requestKey,
} from "../messages/jsonrpc.js";
import {
  type BridgeRequest,
  modernRequest,
  requestEra,
  type ToClient,
  withEnvelope,
  withoutEnvelope,
} from "../messages/request-model.js";
import type { ToolPolicy } from "../steps/policy.js";
import { bridgeDiscoverResult, initializeResultFromDiscover } from "../translate/discover.js";
import { LegacyListen, META_SUBSCRIPTION_ID } from "../translate/listen.js";
import { LEGACY_TASKS_CAPABILITY, LegacyClientTasks, offersTasks } from "../translate/tasks.js";
import {
  type AskClient,
  asLegacyResult,
  callTool,
  inputRound,
  isInputRequiredResult,
  MAX_INPUT_ROUNDS,
  retryParams,
} from "../translate/tool-call.js";
import {
  bridgeError,
  type ModernUpstream,
  type NotificationSink,
  type UpstreamAnswer,
} from "../upstream/modern.js";
import { LegacyFace } from "./legacy-face.js";
import { checkedInputRequired, RefusedServerInput } from "./server-input.js";

/** 2026-07-28 error codes a 2025-era client does not know: said in words, with a code it knows. */
function asLegacyError(answer: { error: { code: number; message: string; data?: unknown } }): UpstreamAnswer {
  if (answer.error.code !== -32021) return answer;
  return {
    error: {
      code: -32600,
      message: `chat-mcp-bridge: the server needs a capability this client did not declare at initialize: ${answer.error.message}`,
      ...(answer.error.data === undefined ? {} : { data: answer.error.data }),
    },
  };
}

export interface ModernServerRelayOptions {
  upstream: ModernUpstream;
  /** The server's DiscoverResult (from the probe or the remembered verdict). */
  discover: Json;
  toClient: ToClient;
  log: BridgeLog;
  policy: ToolPolicy;
  /** The first wait before a dropped `subscriptions/listen` is reopened (tests shorten it). */
  listenBackoffMs?: number;
}

export class ModernServerRelay {
  readonly #options: ModernServerRelayOptions;
  readonly #legacy: LegacyFace;
  /** Client requests still running upstream, by id: `notifications/cancelled` aborts them. */
  readonly #running = new Map<string, AbortController>();
  /** The legacy client's `subscriptions/listen`, opened once it is initialized. */
  #listen: LegacyListen | undefined;
  #closing = false;
  readonly #tasks: LegacyClientTasks | undefined;

  constructor(options: ModernServerRelayOptions) {
    this.#options = options;
    this.#legacy = new LegacyFace(options.toClient);
    if (offersTasks(options.discover))
      this.#tasks = new LegacyClientTasks((request, params) => this.#forward(request, params));
  }

  fromClient(message: JSONRPCMessage): void {
    if (this.#closing) return;
    const value = message as Json;
    if (!("method" in value)) {
      if (!this.#legacy.onClientResponse(value))
        this.#options.log.debug("dropped a response to no request of the bridge");
      return;
    }
    const method = String(value.method);
    if (!("id" in value)) {
      this.#onNotification(method, value.params);
      return;
    }
    const id = value.id as RequestId;
    const controller = new AbortController();
    this.#running.set(requestKey(id), controller);
    void this.#answer(id, method, value.params, controller.signal)
      .catch((error: unknown) => bridgeError(describeError(error)))
      .then((answer) => {
        this.#running.delete(requestKey(id));
        if (controller.signal.aborted || this.#closing) return;
        this.#options.toClient({ jsonrpc: "2.0", id, ...answer } as JSONRPCMessage);
      });
  }

  /** A notification the server sent on a request's stream (progress, logs, the legacy client's list changes). */
  fromServer(message: JSONRPCMessage): void {
    if (this.#closing) return;
    const delivered = this.#listen ? this.#listen.fromServer(message as Json) : (message as Json);
    if (delivered) this.#options.toClient(delivered as JSONRPCMessage);
  }

  /** A modern client's own `subscriptions/listen`: its stream's messages under the id of the listen that opened it. */
  async #modernListen(request: BridgeRequest): Promise<UpstreamAnswer> {
    const asClientListen = (meta: unknown): Json => ({
      ...(isObject(meta) ? meta : {}),
      [META_SUBSCRIPTION_ID]: request.id,
    });
    const answer = await this.#forward(request, request.params, (message) => {
      if (this.#closing || request.signal.aborted) return;
      const value = message as Json;
      const params = isObject(value.params) ? value.params : {};
      this.#options.toClient({
        ...value,
        params: { ...params, _meta: asClientListen(params._meta) },
      } as JSONRPCMessage);
    });
    if (!("result" in answer)) return answer;
    return { result: { ...answer.result, _meta: asClientListen(answer.result._meta) } };
  }

  close(): void {
    this.#closing = true;
    this.#listen?.close();
    for (const controller of this.#running.values()) controller.abort();
    this.#legacy.close();
  }

  #onNotification(method: string, params: unknown): void {
    if (method === "notifications/cancelled") {
      const requestId = cancelledRequestId(params);
      if (requestId !== undefined)
        this.#running.get(requestKey(requestId))?.abort(new Error("cancelled by the client"));
      return;
    }
    if (method === "tools/call") {
      this.#options.log.debug("dropped a tools/call sent as a notification (it has no id to answer)");
      return;
    }
    if (method === "notifications/initialized") {
      this.#openListen();
      return;
    }
    // The 2026 era has no client-to-server notifications: initialized, roots/list_changed and the like end here.
    this.#options.log.debug(`${method} is not sent to a modern server (it has no such notification)`);
  }

  async #answer(
    id: RequestId,
    method: string,
    params: unknown,
    signal: AbortSignal,
  ): Promise<UpstreamAnswer> {
    if (method === "initialize") {
      this.#legacy.initialize(params);
      const requested = isObject(params) ? params.protocolVersion : undefined;
      const result = initializeResultFromDiscover(this.#options.discover, requested);
      if (this.#tasks) (result.capabilities as Json).tasks = LEGACY_TASKS_CAPABILITY;
      return { result };
    }
    // The modern face when the request carries an envelope, else the legacy client's.
    const request: BridgeRequest =
      requestEra(method, params) === "modern"
        ? modernRequest(id, method, params, signal)
        : { id, method, params: withoutEnvelope(params), client: this.#legacy.client, signal };
    const legacy = request.client.era === "legacy";
    if (method === "ping") return { result: {} };
    if (method === "server/discover") return { result: bridgeDiscoverResult(this.#options.discover) };
    if (method === "logging/setLevel" && legacy) {
      this.#legacy.setLogLevel(params);
      return { result: {} };
    }
    if ((method === "resources/subscribe" || method === "resources/unsubscribe") && legacy)
      return this.#subscription(method, params);
    if (method === "subscriptions/listen" && !legacy) return this.#modernListen(request);
    const tasks = legacy ? this.#tasks : undefined;
    const asTask = method === "tools/call" ? tasks?.asExtensionCall(request) : undefined;
    if (tasks && asTask) return tasks.created(await this.#callTool(asTask));
    if (tasks?.handles(method)) return tasks.answer(request);
    const answer = method === "tools/call" ? await this.#callTool(request) : await this.#forward(request);
    if (!("result" in answer)) return legacy ? asLegacyError(answer) : answer;
    let result = answer.result;
    if (method === "tools/list") result = this.#options.policy.listed(result, request.client) as Json;
    if (method === "tools/list" && tasks) result = withOptionalTasks(result);
    // A modern client requires resultType; a server that left it out meant complete.
    if (!legacy) return { result: "resultType" in result ? result : { ...result, resultType: "complete" } };
    if (method === "resources/read" || method === "prompts/get") {
      const completed = await this.#completeForLegacy(request, result);
      if ("error" in completed) return completed;
      result = completed.result;
    }
    return { result: asLegacyResult(result) };
  }

  /** Opens the legacy client's listen: the list changes the server offers, and its resource subscriptions. */
  #openListen(): void {
    if (this.#listen || this.#closing) return;
    const { upstream, discover, log, listenBackoffMs } = this.#options;
    this.#listen = new LegacyListen({
      serverCapabilities: discover.capabilities,
      log,
      ...(listenBackoffMs === undefined ? {} : { firstBackoffMs: listenBackoffMs }),
      listen: (filter, signal) =>
        upstream.request(
          "subscriptions/listen",
          withEnvelope({ notifications: filter }, this.#legacy.client, upstream.protocolVersion),
          signal,
        ),
    });
    this.#listen.open();
  }

  /** A 2025 `resources/subscribe` / `unsubscribe`: the listen's resource list changes (the 2026 era has no such request). */
  #subscription(method: string, params: unknown): UpstreamAnswer {
    const uri = isObject(params) ? params.uri : undefined;
    if (typeof uri !== "string") return { error: { code: -32602, message: `${method} needs a uri` } };
    this.#openListen();
    if (method === "resources/subscribe") this.#listen?.subscribe(uri);
    else this.#listen?.unsubscribe(uri);
    return { result: {} };
  }

  /** A request upstream, stamped with its client's envelope and the server's protocol version. */
  #forward(
    request: BridgeRequest,
    params = request.params,
    onNotification?: NotificationSink,
  ): Promise<UpstreamAnswer> {
    const upstream = this.#options.upstream;
    const version =
      request.client.era === "modern" ? request.client.protocolVersion : upstream.protocolVersion;
    return upstream
      .request(request.method, withEnvelope(params, request.client, version), request.signal, onNotification)
      .then((answer) => this.#hostMaySee(request.method, answer));
  }

  /** A server's `input_required` round as the host may see it (see `checkedInputRequired`), else an error. */
  #hostMaySee(method: string, answer: UpstreamAnswer): UpstreamAnswer {
    if (!("result" in answer)) return answer;
    try {
      const result = checkedInputRequired(answer.result);
      return result === answer.result ? answer : { ...answer, result };
    } catch (error) {
      if (!(error instanceof RefusedServerInput)) throw error;
      this.#options.log.info(`refused the server's input_required answer to ${method}: ${error.message}`);
      return bridgeError(`the server's request for input was refused: ${error.message}`);
    }
  }

  readonly #ask: AskClient = (method, params, signal) => this.#legacy.ask(method, params, signal);

  /** A `tools/call`: judged and through the steps and, for a legacy client, the rounds of input (see callTool). */
  async #callTool(request: BridgeRequest): Promise<UpstreamAnswer> {
    const answer = await callTool(
      this.#options.policy.steps,
      { params: request.params, client: request.client },
      {
        ask: this.#ask,
        signal: request.signal,
        send: (forwarded) => this.#forward(request, forwarded),
      },
    );
    return "dropped" in answer ? { result: {} } : answer;
  }

  /** `resources/read` and `prompts/get` may also answer `input_required`: the same rounds, without steps. */
  async #completeForLegacy(request: BridgeRequest, first: Json): Promise<UpstreamAnswer> {
    let result = first;
    for (let round = 1; isInputRequiredResult(result); round++) {
      if (round >= MAX_INPUT_ROUNDS)
        return bridgeError(`the request still needed input after ${MAX_INPUT_ROUNDS} rounds; given up`);
      const next = await inputRound(result, request.client, this.#ask, request.signal);
      if ("error" in next) return next;
      const answer = await this.#forward(request, retryParams(request.params, result, next.inputResponses));
      if (!("result" in answer)) return answer;
      result = answer.result;
    }
    return { result };
  }
}

/** A 2025 client may ask any tool for a task: the server decides, and the bridge keeps an at-once answer as one. */
function withOptionalTasks(result: Json): Json {
  if (!Array.isArray(result.tools)) return result;
  const tools = result.tools.map((tool: unknown) =>
    isObject(tool) && !isObject(tool.execution) ? { ...tool, execution: { taskSupport: "optional" } } : tool,
  );
  return { ...result, tools };
}
