/** Tasks across eras: a 2025 client's core tasks over a 2026-07-28 server's Tasks extension, and none offered where a pair cannot finish one. */

import { randomUUID } from "node:crypto";
import { isJsonObject as isObject, type JsonObject as Json } from "../messages/jsonrpc.js";
import type { BridgeRequest, ClientContext } from "../messages/request-model.js";
import { sleep, type UpstreamAnswer } from "../upstream/modern.js";
import { asLegacyResult } from "./tool-call.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const RELATED_TASK = "io.modelcontextprotocol/related-task";
const TERMINAL = new Set(["completed", "failed", "cancelled"]);
/** Poll bounds for `tasks/result`: the server's `pollIntervalMs` within them. */
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5000;
/** Finished answers the bridge keeps as tasks for a 2025 client (a server that answered at once), oldest dropped. */
const MAX_KEPT_ANSWERS = 100;
const KEPT_ANSWER_TTL_MS = 60 * 60 * 1000;

/** Whether a 2026-07-28 server's discover offers the Tasks extension. */
export function offersTasks(discover: Json): boolean {
  const capabilities = isObject(discover.capabilities) ? discover.capabilities : {};
  return isObject(capabilities.extensions) && TASKS_EXTENSION in capabilities.extensions;
}

/** The 2025-11-25 `capabilities.tasks` a 2025 client reads: calls as tasks, cancel (the extension has no list). */
export const LEGACY_TASKS_CAPABILITY: Json = { cancel: {}, requests: { tools: { call: {} } } };

/**
 * A 2025 server's capabilities and tools for a 2026-07-28 client: no core `tasks`, `taskSupport` or Tasks extension
 * (that server makes a task only when `params.task` asks, so none reaches a client that could not finish it).
 */
export function withoutLegacyTasks(method: string, result: Json): Json {
  if (method === "tools/list" && Array.isArray(result.tools)) {
    const tools = result.tools.map((tool: unknown) => {
      if (!isObject(tool) || !isObject(tool.execution) || !("taskSupport" in tool.execution)) return tool;
      const { taskSupport: _t, ...execution } = tool.execution;
      const { execution: _e, ...rest } = tool;
      return Object.keys(execution).length > 0 ? { ...rest, execution } : rest;
    });
    return { ...result, tools };
  }
  if (!isObject(result.capabilities)) return result;
  const { tasks: _tasks, ...capabilities } = result.capabilities;
  // A 2025 session carries no per-request capabilities: the extension could never be declared to it on a call.
  if (isObject(capabilities.extensions) && TASKS_EXTENSION in capabilities.extensions) {
    const { [TASKS_EXTENSION]: _extension, ...extensions } = capabilities.extensions;
    capabilities.extensions = extensions;
  }
  return { ...result, capabilities };
}

type Forward = (request: BridgeRequest, params: Json) => Promise<UpstreamAnswer>;

interface KeptAnswer {
  task: Json;
  result: Json;
  expiresAt: number;
}

/**
 * The 2025 client's tasks over a 2026-07-28 server's Tasks extension: `params.task` becomes the extension declared on
 * the call, the server's task (or its plain answer, kept as a finished task) the core's, `tasks/result` a poll.
 */
export class LegacyClientTasks {
  readonly #kept = new Map<string, KeptAnswer>();
  readonly #forward: Forward;

  constructor(forward: Forward) {
    this.#forward = forward;
  }

  /** A 2025 `tools/call` asking for a task: the call as the extension asks it, with its client declaring the extension. */
  asExtensionCall(request: BridgeRequest): BridgeRequest | undefined {
    if (!isObject(request.params) || request.params.task === undefined) return undefined;
    const { task: _task, ...params } = request.params;
    const capabilities = request.client.capabilities as Json;
    const extensions = isObject(capabilities.extensions) ? capabilities.extensions : {};
    const client: ClientContext = {
      ...request.client,
      capabilities: { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } },
    };
    return { ...request, params, client };
  }

  /** The server's answer to that call as the core's `CreateTaskResult`: its task, or its plain answer kept as one. */
  created(answer: UpstreamAnswer): UpstreamAnswer {
    if (!("result" in answer)) return answer;
    if (answer.result.resultType === "task") return { result: { task: legacyTask(answer.result) } };
    this.#prune();
    const at = new Date().toISOString();
    const task: Json = {
      taskId: `chat-mcp-bridge-${randomUUID()}`,
      status: "completed",
      statusMessage: "The server answered at once.",
      createdAt: at,
      lastUpdatedAt: at,
      ttl: KEPT_ANSWER_TTL_MS,
    };
    this.#kept.set(String(task.taskId), {
      task,
      result: asLegacyResult(answer.result),
      expiresAt: Date.now() + KEPT_ANSWER_TTL_MS,
    });
    return { result: { task } };
  }

  /** Whether the bridge answers this method for a 2025 client (the core's task methods). */
  handles(method: string): boolean {
    return method === "tasks/get" || method === "tasks/result" || method === "tasks/cancel";
  }

  async answer(request: BridgeRequest): Promise<UpstreamAnswer> {
    const taskId = isObject(request.params) ? request.params.taskId : undefined;
    if (typeof taskId !== "string") return invalid(`${request.method} needs a taskId`);
    this.#prune();
    const kept = this.#kept.get(taskId);
    if (kept) {
      if (request.method === "tasks/get") return { result: kept.task };
      if (request.method === "tasks/result") return { result: withRelatedTask(kept.result, taskId) };
      return invalid("The task has completed already");
    }
    if (request.method === "tasks/get") return this.#get(request, taskId);
    if (request.method === "tasks/cancel") {
      const cancelled = await this.#forward({ ...request, method: "tasks/cancel" }, { taskId });
      return "error" in cancelled ? cancelled : this.#get(request, taskId);
    }
    return this.#result(request, taskId);
  }

  async #get(request: BridgeRequest, taskId: string): Promise<UpstreamAnswer> {
    const answer = await this.#forward({ ...request, method: "tasks/get" }, { taskId });
    return "error" in answer ? answer : { result: legacyTask(answer.result) };
  }

  /** `tasks/result`: `tasks/get` at the server's pace until the task ends, then its result or error. */
  async #result(request: BridgeRequest, taskId: string): Promise<UpstreamAnswer> {
    for (;;) {
      const answer = await this.#forward({ ...request, method: "tasks/get" }, { taskId });
      if ("error" in answer) return answer;
      const task = answer.result;
      if (TERMINAL.has(String(task.status))) {
        if (task.status === "completed" && isObject(task.result))
          return { result: withRelatedTask(asLegacyResult(task.result), taskId) };
        if (task.status === "failed" && isObject(task.error)) {
          const { code, message, data } = task.error;
          return {
            error: {
              code: typeof code === "number" ? code : -32603,
              message: String(message ?? "The task failed"),
              ...(data === undefined ? {} : { data }),
            },
          };
        }
        return { error: { code: -32000, message: `Task ${task.status}` } };
      }
      // The task's own lifetime bounds the wait: past it, the server may have dropped it.
      const endsAt =
        Date.parse(String(task.createdAt)) +
        (typeof task.ttlMs === "number" ? task.ttlMs : KEPT_ANSWER_TTL_MS);
      if (Date.now() > endsAt)
        return { error: { code: -32000, message: `chat-mcp-bridge: task ${taskId} outlived its ttl` } };
      const wait = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, Number(task.pollIntervalMs) || 1000));
      const slept = await sleep(wait, request.signal).then(
        () => true,
        () => false,
      );
      if (!slept) return { error: { code: -32000, message: "Cancelled" } };
    }
  }

  #prune(): void {
    const now = Date.now();
    for (const [taskId, kept] of this.#kept) {
      if (kept.expiresAt <= now || this.#kept.size > MAX_KEPT_ANSWERS) this.#kept.delete(taskId);
    }
  }
}

/** A 2026-07-28 task (a `CreateTaskResult` or a `tasks/get` answer) in the core's 2025-11-25 words. */
function legacyTask(task: Json): Json {
  const {
    resultType: _r,
    result: _result,
    error: _error,
    inputRequests: _i,
    ttlMs,
    pollIntervalMs,
    _meta: _m,
    ...rest
  } = task;
  return {
    ...rest,
    ttl: typeof ttlMs === "number" ? ttlMs : null,
    ...(typeof pollIntervalMs === "number" ? { pollInterval: pollIntervalMs } : {}),
  };
}

function withRelatedTask(result: Json, taskId: string): Json {
  const meta = isObject(result._meta) ? result._meta : {};
  return { ...result, _meta: { ...meta, [RELATED_TASK]: { taskId } } };
}

function invalid(message: string): UpstreamAnswer {
  return { error: { code: -32602, message: `chat-mcp-bridge: ${message}` } };
}
