/** Where a modern (2026-07-28) client meets a 2025-era server: the bridge opens the legacy session itself (an
 * `initialize` from the client's envelope), answers `server/discover` from its result, lifts the envelope off
 * each request and marks each result complete. The server's mid-call requests (elicitation, sampling, roots)
 * become `input_required` for the client, the call held until its retry answers them. Made by the legacy-server
 * relay for a modern client's first request, below the policy: a 2025 client never meets it.
 */

import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/client";
import type { BridgeLog } from "../log/log.js";
import {
  BridgeRequestIds,
  cancelledRequestId,
  isJsonObject as isObject,
  type JsonObject as Json,
  requestKey,
} from "../messages/jsonrpc.js";
import {
  clientFromEnvelope,
  type EraRelay,
  LATEST_LEGACY_VERSION,
  requestEra,
  type ToClient,
  withoutEnvelope,
} from "../messages/request-model.js";
import { asModernResult, bridgeDiscoverResult, discoverFromInitializeResult } from "./discover.js";
import { SessionListens } from "./listen.js";

/** Calls held at once waiting for a client's retry; one more and the server's request is refused. */
const MAX_HELD_CALLS = 64;
/** How long a held call waits for the client's retry before the bridge gives up on it. */
const HELD_CALL_TIMEOUT_MS = 5 * 60 * 1000;

/** The methods a server may ask of a client mid-call, which a 2026 client answers as `inputRequests`. */
const INPUT_METHODS: ReadonlySet<string> = new Set([
  "elicitation/create",
  "sampling/createMessage",
  "roots/list",
]);

/** One request the server put to the client, waiting for its answer among the retry's `inputResponses`. */
interface PendingServerRequest {
  serverId: RequestId;
  method: string;
  params: Json;
}

/** A modern client's request on its way through the legacy session (under an id of the bridge's). */
interface ModernCall {
  upstreamId: string;
  method: string;
  /** The client request the call's next answer goes to; undefined while held for the client's retry. */
  clientId: RequestId | undefined;
  /** Server requests not yet answered, by their key in `inputRequests`. */
  pending: Map<string, PendingServerRequest>;
  /** The `requestState` the client echoes when it retries (set while held). */
  state?: string;
  /** The server's answer when it came while the call was held. */
  settled?: Json;
  timer?: NodeJS.Timeout;
}

/** The `input_required` result a held call answers its client with. */
function inputRequiredResult(call: ModernCall): Json {
  const inputRequests = Object.fromEntries(
    [...call.pending].map(([key, request]) => [key, { method: request.method, params: request.params }]),
  );
  return { resultType: "input_required", inputRequests, requestState: call.state };
}

/** A fresh `requestState` token: opaque to the client, the key of the held call in the bridge. */
const newRequestState = (): string => `chat-mcp-bridge/${randomUUID()}`;

export interface ModernClientOverLegacyLimits {
  /** How long a call waits for the client's retry (default HELD_CALL_TIMEOUT_MS). */
  heldCallTimeoutMs?: number;
  /** Calls held at once (default MAX_HELD_CALLS). */
  maxHeldCalls?: number;
}

export class ModernClientOverLegacy implements EraRelay {
  readonly #relay: EraRelay;
  readonly #toClient: ToClient;
  readonly #log: BridgeLog;
  readonly #limits: Required<ModernClientOverLegacyLimits>;
  readonly #ids = new BridgeRequestIds("translate");
  readonly #initializeId = this.#ids.next();
  #nextKey = 0;
  /** The session the bridge opened for the modern client: the server's InitializeResult. */
  #session: Promise<Json> | undefined;
  #sessionAnswer: ((message: Json) => void) | undefined;
  /** Modern requests in flight upstream, by the bridge's id for them (a held call keeps its id across retries). */
  readonly #calls = new Map<string, ModernCall>();
  /** Requests waiting for the session, by client id: a cancellation meanwhile marks them, and they are never sent. */
  readonly #starting = new Map<string, { cancelled: boolean }>();
  /** Calls waiting for the client's retry, by their `requestState`. */
  readonly #held = new Map<string, ModernCall>();
  /** The modern client's `subscriptions/listen` requests, answered by the bridge from the session's notifications. */
  readonly #listens: SessionListens;

  /** `openRelay` builds the legacy relay with the toClient it must call (this translator's). */
  constructor(
    openRelay: (toClient: ToClient) => EraRelay,
    toClient: ToClient,
    log: BridgeLog,
    limits: ModernClientOverLegacyLimits = {},
  ) {
    this.#toClient = toClient;
    this.#log = log;
    this.#limits = {
      heldCallTimeoutMs: limits.heldCallTimeoutMs ?? HELD_CALL_TIMEOUT_MS,
      maxHeldCalls: limits.maxHeldCalls ?? MAX_HELD_CALLS,
    };
    this.#relay = openRelay((message, raw, relatedRequestId) =>
      this.#fromServer(message, raw, relatedRequestId),
    );
    this.#listens = new SessionListens(toClient, (method, params) =>
      this.#toSession({ id: this.#ids.next(), method, params }),
    );
  }

  /** A message of the bridge's own to the session. */
  #toSession(message: Json): void {
    this.#relay.fromClient({ jsonrpc: "2.0", ...message } as JSONRPCMessage);
  }

  fromClient(message: JSONRPCMessage): void {
    const value = message as Json;
    const method = typeof value.method === "string" ? value.method : undefined;
    if (method === "notifications/cancelled" && !("id" in value) && this.#cancel(value.params)) return;
    if (method === undefined || !("id" in value) || requestEra(method, value.params) !== "modern") {
      this.#relay.fromClient(message);
      return;
    }
    const starting = { cancelled: false };
    this.#starting.set(requestKey(value.id as RequestId), starting);
    void this.#modernRequest(value.id as RequestId, method, value.params, starting);
  }

  close(timeoutMs?: number): Promise<void> | void {
    for (const call of this.#calls.values()) clearTimeout(call.timer);
    this.#held.clear();
    return this.#relay.close(timeoutMs);
  }

  async #modernRequest(
    id: RequestId,
    method: string,
    params: unknown,
    starting: { cancelled: boolean },
  ): Promise<void> {
    let initialized: Json;
    try {
      initialized = await this.#openSession(params);
    } catch (error) {
      this.#started(id, starting);
      if (starting.cancelled) return;
      if (method === "server/discover") {
        // A probing host signed out (or a server not reachable yet): the bridge's own dual-era face answers.
        this.#log.debug(
          `server/discover answered by the bridge itself: ${(error as { message?: string }).message}`,
        );
        this.#answer(id, { result: bridgeDiscoverResult(undefined) });
        return;
      }
      this.#toClient({ jsonrpc: "2.0", id, error: error as { code: number; message: string } });
      return;
    }
    this.#started(id, starting);
    if (starting.cancelled) {
      this.#log.debug(`${method} was cancelled by the client before it was sent to the server: not sent`);
      return;
    }
    if (method === "server/discover") {
      this.#answer(id, { result: discoverFromInitializeResult(initialized) });
      return;
    }
    if (method === "subscriptions/listen") {
      this.#listens.open(id, params, initialized);
      return;
    }
    const { inputResponses, requestState, ...lifted } = withoutEnvelope(params) ?? {};
    if (requestState !== undefined) {
      const call = typeof requestState === "string" ? this.#held.get(requestState) : undefined;
      if (call) this.#resume(call, id, inputResponses);
      else
        this.#answer(id, {
          error: {
            code: -32602,
            message:
              "chat-mcp-bridge: the requestState is unknown or expired (a call waits " +
              `${Math.round(this.#limits.heldCallTimeoutMs / 1000)} s for its retry); send the request again without it`,
          },
        });
      return;
    }
    const upstreamId = this.#ids.next();
    this.#calls.set(upstreamId, { upstreamId, method, clientId: id, pending: new Map() });
    this.#toSession({
      id: upstreamId,
      method,
      ...(Object.keys(lifted).length > 0 || params !== undefined ? { params: lifted } : {}),
    });
  }

  /** The client's retry of a held call: its `inputResponses` answer the server's requests; what is left asks again. */
  #resume(call: ModernCall, clientId: RequestId, inputResponses: unknown): void {
    if (call.state) this.#held.delete(call.state);
    clearTimeout(call.timer);
    call.state = undefined;
    call.clientId = clientId;
    const responses = isObject(inputResponses) ? inputResponses : {};
    for (const [key, pending] of call.pending) {
      const response = responses[key];
      if (!isObject(response)) continue;
      call.pending.delete(key);
      this.#toSession({ id: pending.serverId, result: response });
    }
    if (call.settled) this.#settle(call, call.settled);
    else if (call.pending.size > 0) this.#hold(call);
  }

  /** Answers the call's client with `input_required` and keeps the call until the retry (or the time limit). */
  #hold(call: ModernCall): void {
    const clientId = call.clientId;
    if (clientId === undefined) return;
    call.clientId = undefined;
    call.state = newRequestState();
    this.#held.set(call.state, call);
    call.timer = setTimeout(() => this.#expire(call), this.#limits.heldCallTimeoutMs);
    call.timer.unref();
    this.#answer(clientId, { result: inputRequiredResult(call) });
  }

  /** The client never retried: the server's requests are refused and its call cancelled. */
  #expire(call: ModernCall): void {
    if (call.state) this.#held.delete(call.state);
    this.#calls.delete(call.upstreamId);
    const reason = "the 2026-07-28 client did not retry the call in time";
    this.#log.info(`gave up a held ${call.method}: ${reason}`);
    for (const pending of call.pending.values())
      this.#toSession({
        id: pending.serverId,
        error: { code: -32603, message: `chat-mcp-bridge: ${reason}` },
      });
    this.#toSession({ method: "notifications/cancelled", params: { requestId: call.upstreamId, reason } });
  }

  /** A modern client's `notifications/cancelled` for one of its calls (sent on under the bridge's id) or listens. */
  #cancel(params: unknown): boolean {
    const requestId = cancelledRequestId(params);
    if (requestId === undefined) return false;
    if (this.#listens.cancel(requestId)) return true;
    const call = [...this.#calls.values()].find(
      (candidate) =>
        candidate.clientId !== undefined && requestKey(candidate.clientId) === requestKey(requestId),
    );
    if (!call) {
      const starting = this.#starting.get(requestKey(requestId));
      if (!starting) return false;
      starting.cancelled = true;
      return true;
    }
    this.#calls.delete(call.upstreamId);
    this.#toSession({
      method: "notifications/cancelled",
      params: { ...(params as Json), requestId: call.upstreamId },
    });
    return true;
  }

  /** The request is past its wait for the session: from now on a cancellation finds it among the calls, or not at all. */
  #started(id: RequestId, starting: { cancelled: boolean }): void {
    if (this.#starting.get(requestKey(id)) === starting) this.#starting.delete(requestKey(id));
  }

  #answer(id: RequestId, body: { result: Json } | { error: unknown }): void {
    this.#toClient({ jsonrpc: "2.0", id, ...body } as JSONRPCMessage);
  }

  /** The server answered the call: to its client now, or to the retry when it is held. */
  #settle(call: ModernCall, answer: Json): void {
    if (call.clientId === undefined) {
      call.settled = answer;
      return;
    }
    this.#calls.delete(call.upstreamId);
    if (isObject(answer.result))
      this.#answer(call.clientId, { result: asModernResult(call.method, answer.result) });
    else this.#answer(call.clientId, { error: answer.error ?? { code: -32603, message: "no result" } });
  }

  /** The legacy session, opened once with what the first modern request's envelope says of its client. */
  #openSession(params: unknown): Promise<Json> {
    this.#session ??= new Promise<Json>((resolve, reject) => {
      const client = clientFromEnvelope(params);
      this.#sessionAnswer = (answer) => {
        if (isObject(answer.result)) {
          this.#toSession({ method: "notifications/initialized" });
          resolve(answer.result);
        } else {
          this.#session = undefined;
          reject(isObject(answer.error) ? answer.error : { code: -32000, message: "initialize failed" });
        }
      };
      this.#toSession({
        id: this.#initializeId,
        method: "initialize",
        params: {
          protocolVersion: LATEST_LEGACY_VERSION,
          capabilities: client.capabilities,
          clientInfo: client.clientInfo,
        },
      });
    });
    return this.#session;
  }

  #fromServer(message: JSONRPCMessage, raw?: string, relatedRequestId?: RequestId): void {
    const value = message as Json;
    if (!("method" in value) && value.id === this.#initializeId) {
      this.#sessionAnswer?.(value);
      return;
    }
    if (!("method" in value) && this.#ids.owns(value.id)) {
      const call = this.#calls.get(value.id);
      if (call) this.#settle(call, value);
      else this.#log.debug("dropped the answer to a modern call that was cancelled or given up");
      return;
    }
    if ("method" in value && "id" in value && this.#calls.size > 0 && this.#session) {
      this.#serverRequest(value.id as RequestId, String(value.method), value.params, relatedRequestId);
      return;
    }
    // A modern client gets a list change only on a listen that asked for it (spec: MUST NOT); a 2025 client gets all.
    if ("method" in value && !("id" in value) && this.#session && this.#listens.deliver(value)) return;
    this.#toClient(message, raw);
  }

  /**
   * A server's request while modern calls run: an entry of the `inputRequests` of the call whose stream carried it
   * (or, from the GET stream, of the oldest running call).
   */
  #serverRequest(serverId: RequestId, method: string, params: unknown, relatedRequestId?: RequestId): void {
    const calls = [...this.#calls.values()];
    const related = typeof relatedRequestId === "string" ? this.#calls.get(relatedRequestId) : undefined;
    const call = related ?? calls.find((candidate) => candidate.clientId !== undefined) ?? calls.at(-1);
    let refusal: string | undefined;
    if (!INPUT_METHODS.has(method)) refusal = `${method} is not a request a 2026-07-28 client answers`;
    else if (!call) refusal = "no call of the client is waiting";
    else if (call.clientId !== undefined && this.#held.size >= this.#limits.maxHeldCalls)
      refusal = `already ${this.#limits.maxHeldCalls} calls wait for their client's retry`;
    if (refusal || !call) {
      this.#log.info(`the server asked ${method} of a 2026-07-28 client; refused: ${refusal}`);
      this.#toSession({ id: serverId, error: { code: -32601, message: `chat-mcp-bridge: ${refusal}` } });
      return;
    }
    const key = `${method.split("/")[0]}-${++this.#nextKey}`;
    call.pending.set(key, { serverId, method, params: isObject(params) ? params : {} });
    this.#hold(call);
  }
}
