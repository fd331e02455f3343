/** `create_chat` and `send_message` as tasks for a host that declares them: the 2025-11-25 core and the 2026-07-28 Tasks extension. */

/*
 * The 2025-11-25 core: `params.task`, `tasks/get|result|list|cancel`; the 2026-07-28 extension:
 * `io.modelcontextprotocol/tasks`, `tasks/get|update|cancel`. The SDK has no task runtime: the route answers the call with a task at once and runs the same call, without the
 * task, through the SDK's own handler in the background (so every check of a call still applies); the `tasks/*`
 * methods are the SDK's custom request handlers on each server, reading one store scoped to the account.
 */
import { randomUUID } from "node:crypto";
import {
  CLIENT_CAPABILITIES_META_KEY,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type ServerContext,
} from "@modelcontextprotocol/server";
import * as z from "zod";
import type { Principal } from "../context.js";
import { principalOf } from "./tools.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** The tools long enough to be worth a task: they wait for the assistant. */
export const TASK_TOOLS: ReadonlySet<string> = new Set(["create_chat", "send_message"]);
/** A finished task is kept this long for its result; a host that never comes back costs no more than that. */
export const TASK_TTL_MS = 60 * 60 * 1000;
/**
 * How often a host is told to poll: at the pace the scripted assistant answers (its `assistantDelayMs`), between
 * 100 ms and a second. Polling faster finds nothing new; slower leaves a finished answer waiting.
 */
const pollIntervalFor = (assistantDelayMs = 0): number => Math.min(1000, Math.max(100, assistantDelayMs));
/** Live and finished tasks kept per account, oldest dropped first. */
const MAX_TASKS_PER_ACCOUNT = 100;

type Status = "working" | "completed" | "failed" | "cancelled";
type JsonRpcAnswer =
  | { result: Record<string, unknown> }
  | { error: { code: number; message: string; data?: unknown } };

interface ChatTask {
  taskId: string;
  account: string;
  status: Status;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  answer?: JsonRpcAnswer;
  controller: AbortController;
  done: Promise<void>;
}

const JsonRpcCallSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]),
  method: z.literal("tools/call"),
  params: z.looseObject({ name: z.string(), task: z.unknown().optional(), _meta: z.unknown().optional() }),
});

/** Whether a body is one `tools/call` of a task tool whose caller declared tasks, and in which era's words. */
export function taskRequestOf(body: unknown, legacy: boolean): { era: "legacy" | "modern" } | undefined {
  const call = JsonRpcCallSchema.safeParse(body);
  if (!call.success || !TASK_TOOLS.has(call.data.params.name)) return undefined;
  if (legacy) return call.data.params.task !== undefined ? { era: "legacy" } : undefined;
  const meta = call.data.params._meta as Record<string, { extensions?: Record<string, unknown> }> | undefined;
  return meta?.[CLIENT_CAPABILITIES_META_KEY]?.extensions?.[TASKS_EXTENSION] ? { era: "modern" } : undefined;
}

/** The same call without asking for a task: what the SDK's handler runs in the background. */
export function withoutTaskRequest(body: Record<string, unknown>): Record<string, unknown> {
  const { task: _task, ...params } = body.params as Record<string, unknown>;
  const meta = params._meta as Record<string, unknown> | undefined;
  const capabilities = meta?.[CLIENT_CAPABILITIES_META_KEY] as Record<string, unknown> | undefined;
  if (capabilities && typeof capabilities.extensions === "object" && capabilities.extensions !== null) {
    const { [TASKS_EXTENSION]: _tasks, ...extensions } = capabilities.extensions as Record<string, unknown>;
    params._meta = { ...meta, [CLIENT_CAPABILITIES_META_KEY]: { ...capabilities, extensions } };
  }
  return { ...body, params };
}

/** The JSON-RPC answer in an SDK response, JSON or the first answer on an SSE stream. */
async function answerOf(response: Response, id: unknown): Promise<JsonRpcAnswer> {
  const text = await response.text();
  const candidates = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
    : [text];
  for (const candidate of candidates) {
    try {
      const message = JSON.parse(candidate) as { id?: unknown; result?: unknown; error?: unknown };
      if (message.id === id && (message.result || message.error)) return message as JsonRpcAnswer;
    } catch {
      // Not JSON: not the answer.
    }
  }
  return { error: { code: -32603, message: `The call ended without an answer (HTTP ${response.status}).` } };
}

export class ChatTasks {
  readonly #tasks = new Map<string, ChatTask>();
  readonly #pollIntervalMs: number;

  constructor(assistantDelayMs?: number) {
    this.#pollIntervalMs = pollIntervalFor(assistantDelayMs);
  }

  /** Starts a task running `run` (the call without the task) and returns it as created: `tasks/get` finds it at once. */
  start(principal: Principal, run: (signal: AbortSignal) => Promise<Response>, id: unknown): ChatTask {
    this.#prune(principal.account);
    const at = new Date().toISOString();
    const controller = new AbortController();
    const task: ChatTask = {
      taskId: randomUUID(),
      account: principal.account,
      status: "working",
      statusMessage: "The assistant is answering.",
      createdAt: at,
      lastUpdatedAt: at,
      controller,
      done: Promise.resolve(),
    };
    this.#tasks.set(task.taskId, task);
    task.done = run(controller.signal)
      .then((response) => answerOf(response, id))
      .catch((error: unknown) => ({ error: { code: -32603, message: String(error) } }))
      .then((answer) => {
        if (task.status !== "working") return;
        const failed = "error" in answer;
        this.#settle(task, failed ? "failed" : "completed", answer);
      });
    return task;
  }

  #settle(task: ChatTask, status: Status, answer?: JsonRpcAnswer): void {
    task.status = status;
    task.lastUpdatedAt = new Date().toISOString();
    if (answer) task.answer = answer;
    task.statusMessage =
      status === "completed"
        ? "Done."
        : status === "cancelled"
          ? "Cancelled: nothing more is written."
          : "Failed.";
  }

  /** Drops expired tasks, and the account's oldest past its cap. */
  #prune(account: string): void {
    const now = Date.now();
    const own: ChatTask[] = [];
    for (const task of this.#tasks.values()) {
      if (Date.parse(task.createdAt) + TASK_TTL_MS <= now) {
        task.controller.abort();
        this.#tasks.delete(task.taskId);
      } else if (task.account === account) own.push(task);
    }
    for (const task of own.slice(0, Math.max(0, own.length - MAX_TASKS_PER_ACCOUNT + 1))) {
      task.controller.abort();
      this.#tasks.delete(task.taskId);
    }
  }

  /** The caller's task, or the JSON-RPC error: another account's task is as unknown as a made-up id. */
  #find(ctx: ServerContext, taskId: string): ChatTask {
    const principal = principalOf(ctx.http?.authInfo);
    const task = this.#tasks.get(taskId);
    if (!principal || !task || task.account !== principal.account) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `No task ${JSON.stringify(taskId)} for this account`,
      );
    }
    return task;
  }

  #cancel(task: ChatTask): void {
    if (task.status !== "working") return;
    task.controller.abort(new Error("cancelled by the host"));
    this.#settle(task, "cancelled");
  }

  /** The task as the 2026-07-28 extension words it (a `CreateTaskResult`, or with `detailed` a `tasks/get` answer). */
  modern(task: ChatTask, detailed = false): Record<string, unknown> {
    const base = {
      taskId: task.taskId,
      status: task.status,
      ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: TASK_TTL_MS,
      pollIntervalMs: this.#pollIntervalMs,
    };
    if (!detailed || !task.answer) return base;
    return "result" in task.answer
      ? { ...base, result: task.answer.result }
      : { ...base, error: task.answer.error };
  }

  /** The task as the 2025-11-25 core words it. */
  legacy(task: ChatTask): Record<string, unknown> {
    const { ttlMs, pollIntervalMs, ...rest } = this.modern(task);
    return { ...rest, ttl: ttlMs, pollInterval: pollIntervalMs };
  }

  /**
   * The `tasks/*` methods on one server (the SDK's custom handlers), worded in the era of each request: a
   * 2026-07-28 request carries its envelope. The SDK refuses in each era the methods that era does not have.
   */
  register(server: McpServer): void {
    const protocol = server.server;
    const byId = { params: z.looseObject({ taskId: z.string() }) };
    const modern = (ctx: ServerContext) => ctx.mcpReq.envelope !== undefined;
    protocol.setRequestHandler("tasks/get", byId, (params, ctx) => {
      const task = this.#find(ctx, params.taskId);
      return modern(ctx) ? this.modern(task, true) : this.legacy(task);
    });
    protocol.setRequestHandler("tasks/cancel", byId, (params, ctx) => {
      const task = this.#find(ctx, params.taskId);
      if (modern(ctx)) {
        this.#cancel(task);
        return {};
      }
      if (task.status !== "working")
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `The task is ${task.status} already`);
      this.#cancel(task);
      return this.legacy(task);
    });
    // These tasks never ask for input: an update is acknowledged and changes nothing.
    protocol.setRequestHandler("tasks/update", byId, (params, ctx) => {
      this.#find(ctx, params.taskId);
      return {};
    });
    protocol.setRequestHandler("tasks/result", byId, async (params, ctx) => {
      const task = this.#find(ctx, params.taskId);
      await Promise.race([task.done, signalled(ctx.mcpReq.signal), signalled(task.controller.signal)]);
      if (task.status === "cancelled") throw new ProtocolError(-32000, "Task cancelled");
      const answer = task.answer;
      if (!answer) throw new ProtocolError(ProtocolErrorCode.InternalError, "The task has no result yet");
      if ("error" in answer)
        throw new ProtocolError(answer.error.code, answer.error.message, answer.error.data);
      const meta = (answer.result._meta as Record<string, unknown> | undefined) ?? {};
      return { ...answer.result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: task.taskId } } };
    });
    protocol.setRequestHandler("tasks/list", { params: z.looseObject({}).optional() }, (_params, ctx) => {
      const account = principalOf(ctx.http?.authInfo)?.account;
      const own = [...this.#tasks.values()].filter((task) => task.account === account);
      return { tasks: own.map((task) => this.legacy(task)) };
    });
  }

  /** Ends every task's background call (the server closes). */
  close(): void {
    for (const task of this.#tasks.values()) task.controller.abort();
    this.#tasks.clear();
  }
}

/** Resolves once the signal aborts (the host stopped waiting, or the task was cancelled). */
function signalled(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
