/** ChatClient: the typed SDK of the /v2 API, with validated responses, typed errors, retries, pages and flow helpers. */
import type { z } from "zod";
import { defaultBaseUrl, envApiKey } from "../config/index.js";
import {
  type Chat,
  ChatListSchema,
  ChatSchema,
  type ConfirmedPermissionsTask,
  type ConfirmedStepsTask,
  type CreateChatBody,
  type ListChatsParams,
  type ListMessagesParams,
  type Message,
  MessageListSchema,
  MessageSchema,
  type PendingTask,
  type Preview,
  PreviewSchema,
  pendingTaskOf,
  type Task,
} from "../wire/index.js";
import {
  apiErrorFor,
  ChatConnectionError,
  ChatTimeoutError,
  issuePath,
  NoPendingTaskError,
  ResponseValidationError,
  readErrorBody,
} from "./errors.js";
import { Page, PagePromise } from "./pagination.js";
import {
  DEFAULT_MAX_RETRIES,
  type HttpMethod,
  retriesFailure,
  retriesStatus,
  retryDelayMs,
  sleep,
} from "./retry.js";

/** The subset of `fetch` the client calls; pass your own (a test double, an app's `request`) as `fetch`. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Header values to add; `null` removes a default header (e.g. `{ "user-agent": null }`), undefined is skipped. */
export type HeadersOption = Record<string, string | null | undefined>;

export interface ChatClientOptions {
  /** Service root, without `/v2`. Default: `$CHAT_API_URL`, else `http://127.0.0.1:8787`. */
  baseUrl?: string;
  /** Bearer token (API key or OAuth access token). Default: `$CHAT_API_KEY`, else the `chat-cli login` credentials. */
  token?: string;
  /** Default: the global `fetch`, looked up on each call. */
  fetch?: FetchLike;
  /** Time allowed for each attempt, until the whole body has arrived. Default 60 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt (see README: GETs on failures, POSTs only when not run). Default 2. */
  maxRetries?: number;
  /** Headers sent with every request. */
  headers?: HeadersOption;
  /** How to wait between retries; a test seam. Default: a timer that stops when the call's signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The optional last argument of every method. */
export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  headers?: HeadersOption;
}

export const DEFAULT_TIMEOUT_MS = 60_000;

const USER_AGENT = `chat-mcp-bridge node/${globalThis.process?.versions?.node ?? "unknown"}`;

type TokenSource = "option" | "env" | "stored" | "none";

export class ChatClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly #fetch: FetchLike;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #defaultHeaders: Record<string, string>;
  #tokenSource: TokenSource;
  /** Headers of every GET and POST, authorization included once the token is known; built once, not per call. */
  #getHeaders: Record<string, string> | undefined;
  #postHeaders: Record<string, string> | undefined;
  #storedTokenLoad: Promise<void> | undefined;

  constructor(options: ChatClientOptions = {}) {
    const baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/+$/, "");
    if (!URL.canParse(baseUrl))
      throw new TypeError(`ChatClient: baseUrl ${JSON.stringify(baseUrl)} is not a URL`);
    this.baseUrl = baseUrl;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.#sleep = options.sleep ?? sleep;
    this.#defaultHeaders = mergeHeaders(
      { accept: "application/json", "user-agent": USER_AGENT },
      options.headers,
    );
    const token = options.token ?? envApiKey();
    this.#tokenSource = options.token ? "option" : token ? "env" : "stored";
    if (token) this.#useToken(token);
  }

  // ---- chats -------------------------------------------------------------------------------------------

  /** Starts a chat; resolves once the assistant has answered the first message. */
  createChat(body: CreateChatBody, options?: RequestOptions): Promise<Chat> {
    return this.#request("POST", "/v2/chats", ChatSchema, options, body);
  }

  /** Chats of the credential's account or team, newest-updated first; `for await` it to walk every page. */
  listChats(params: ListChatsParams = {}, options?: RequestOptions): PagePromise<Chat> {
    const fetchPage = (cursor: string | undefined): Promise<Page<Chat>> =>
      this.#request(
        "GET",
        `/v2/chats${queryString({ topic: params.topic, limit: params.limit, cursor })}`,
        ChatListSchema,
        options,
      ).then((body) => new Page(body, fetchPage, cursor));
    return new PagePromise(fetchPage(params.cursor));
  }

  getChat(chatId: string, options?: RequestOptions): Promise<Chat> {
    return this.#request("GET", `/v2/chats/${pathId("chatId", chatId)}`, ChatSchema, options);
  }

  getPreview(chatId: string, options?: RequestOptions): Promise<Preview> {
    return this.#request("GET", `/v2/chats/${pathId("chatId", chatId)}/preview`, PreviewSchema, options);
  }

  // ---- messages ----------------------------------------------------------------------------------------

  /** Messages of a chat, newest first; `for await` it to walk every page. */
  listMessages(
    chatId: string,
    params: ListMessagesParams = {},
    options?: RequestOptions,
  ): PagePromise<Message> {
    const path = `/v2/chats/${pathId("chatId", chatId)}/messages`;
    const fetchPage = (cursor: string | undefined): Promise<Page<Message>> =>
      this.#request(
        "GET",
        `${path}${queryString({ limit: params.limit, cursor })}`,
        MessageListSchema,
        options,
      ).then((body) => new Page(body, fetchPage, cursor));
    return new PagePromise(fetchPage(params.cursor));
  }

  getMessage(chatId: string, messageId: string, options?: RequestOptions): Promise<Message> {
    const path = `/v2/chats/${pathId("chatId", chatId)}/messages/${pathId("messageId", messageId)}`;
    return this.#request("GET", path, MessageSchema, options);
  }

  /** Sends a message; resolves to the assistant's reply. While the chat is paused, this rejects the pending request. */
  sendMessage(chatId: string, body: { message: string }, options?: RequestOptions): Promise<Message> {
    return this.#request(
      "POST",
      `/v2/chats/${pathId("chatId", chatId)}/messages`,
      MessageSchema,
      options,
      body,
    );
  }

  /** Resolves the pause of the latest blocked assistant message; the task is sent unchanged, the service judges it. */
  resolveTask(chatId: string, task: Task, options?: RequestOptions): Promise<Message> {
    const path = `/v2/chats/${pathId("chatId", chatId)}/messages/resolve`;
    return this.#request("POST", path, MessageSchema, options, { task });
  }

  // ---- flow helpers ------------------------------------------------------------------------------------

  /** What the chat waits for, judged from its latest assistant message only; null when it waits for nothing. */
  async getPendingTask(chatId: string, options?: RequestOptions): Promise<PendingTask | null> {
    for await (const message of this.listMessages(chatId, { limit: 10 }, options)) {
      if (message.role === "assistant") return pendingTaskOf(message);
    }
    return null;
  }

  /**
   * Confirms the requested integrations as connected: by default exactly the names the assistant asked for.
   * Names given are sent as they are (the service answers 409 when they differ from the request).
   * Throws `NoPendingTaskError` when the chat does not wait for integrations.
   */
  async confirmIntegrations(
    chatId: string,
    names?: readonly string[],
    options?: RequestOptions,
  ): Promise<Message> {
    const pending = await this.#expectPending(chatId, "integration", options);
    const task: ConfirmedStepsTask = {
      type: "confirmed-steps",
      connectedIntegrationNames: names ? [...names] : pending.integrations,
    };
    return this.resolveTask(chatId, task, options);
  }

  /** Rejects the pending integration request (`confirmed-steps` with no names); the assistant goes on without it. */
  async rejectIntegrations(chatId: string, options?: RequestOptions): Promise<Message> {
    await this.#expectPending(chatId, "integration", options);
    return this.resolveTask(chatId, { type: "confirmed-steps", connectedIntegrationNames: [] }, options);
  }

  /** Approves the pending script permissions, passed back exactly as the assistant suggested them. */
  async approvePermissions(chatId: string, options?: RequestOptions): Promise<Message> {
    const pending = await this.#expectPending(chatId, "permissions", options);
    const task: ConfirmedPermissionsTask = {
      type: "confirmed-permissions",
      permissions: pending.permissions,
    };
    return this.resolveTask(chatId, task, options);
  }

  async #expectPending<K extends PendingTask["kind"]>(
    chatId: string,
    kind: K,
    options: RequestOptions | undefined,
  ): Promise<Extract<PendingTask, { kind: K }>> {
    const pending = await this.getPendingTask(chatId, options);
    if (pending?.kind !== kind) throw new NoPendingTaskError(chatId, kind, pending);
    return pending as Extract<PendingTask, { kind: K }>;
  }

  // ---- transport ---------------------------------------------------------------------------------------

  #useToken(token: string | undefined): void {
    const headers = token
      ? { ...this.#defaultHeaders, authorization: `Bearer ${token}` }
      : this.#defaultHeaders;
    this.#getHeaders = headers;
    this.#postHeaders = { ...headers, "content-type": "application/json" };
  }

  /** Reads the `chat-cli login` credentials (imported lazily, so the client stays light without them). */
  #loadStoredToken(): Promise<void> {
    this.#storedTokenLoad ??= import("../auth/rest-credentials.js")
      .then(({ storedAccessToken }) => storedAccessToken(this.baseUrl))
      .then(
        (token) => {
          if (!token) this.#tokenSource = "none";
          this.#useToken(token);
        },
        () => {
          this.#tokenSource = "none";
          this.#useToken(undefined);
        },
      );
    return this.#storedTokenLoad;
  }

  async #request<S extends z.ZodType>(
    method: HttpMethod,
    path: string,
    schema: S,
    options: RequestOptions | undefined,
    body?: unknown,
  ): Promise<z.output<S>> {
    if (this.#getHeaders === undefined) await this.#loadStoredToken();
    const url = this.baseUrl + path;
    const label = `${method} ${path.split("?")[0]}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const signal = options?.signal;
    const timeoutMs = options?.timeoutMs ?? this.timeoutMs;
    const maxRetries = options?.maxRetries ?? this.maxRetries;
    let refreshedStoredToken = false;

    for (let attempt = 0; ; attempt++) {
      let headers = (method === "GET" ? this.#getHeaders : this.#postHeaders) as Record<string, string>;
      if (options?.headers) headers = mergeHeaders(headers, options.headers);
      if (attempt > 0) headers = { ...headers, "x-retry-count": String(attempt) };

      let response: Response;
      let text: string;
      try {
        [response, text] = await this.#send(
          url,
          { method, headers, body: payload },
          timeoutMs,
          signal,
          label,
        );
      } catch (error) {
        const retryable =
          error instanceof ChatConnectionError &&
          attempt < maxRetries &&
          retriesFailure(method, error instanceof ChatTimeoutError ? undefined : error.cause);
        if (!retryable) throw error;
        await this.#sleep(retryDelayMs(attempt + 1, null), signal);
        continue;
      }

      if (response.ok) return parseBody(schema, text, label);

      // A stored OAuth token may have expired since it was read: read it again (refreshing it) once.
      if (response.status === 401 && this.#tokenSource === "stored" && !refreshedStoredToken) {
        refreshedStoredToken = true;
        const before = this.#getHeaders;
        this.#storedTokenLoad = undefined;
        await this.#loadStoredToken();
        if (this.#getHeaders?.authorization && this.#getHeaders.authorization !== before?.authorization) {
          attempt--;
          continue;
        }
      }
      if (attempt < maxRetries && retriesStatus(method, response.status)) {
        await this.#sleep(retryDelayMs(attempt + 1, response.headers.get("retry-after")), signal);
        continue;
      }
      throw apiErrorFor(response.status, readErrorBody(text), response.headers, label);
    }
  }

  /** One attempt: the answer and its whole body within `timeoutMs`, or a connection, timeout or abort error. */
  async #send(
    url: string,
    init: RequestInit,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    label: string,
  ): Promise<[Response, string]> {
    signal?.throwIfAborted();
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    init.signal = controller.signal;
    try {
      const response = await this.#fetch(url, init);
      return [response, await response.text()];
    } catch (error) {
      if (timedOut) {
        throw new ChatTimeoutError(
          `${label} timed out after ${timeoutMs} ms with no complete answer from ${this.baseUrl}. ` +
            "Raise timeoutMs, or check that the service is reachable.",
          timeoutMs,
        );
      }
      if (signal?.aborted) throw signal.reason;
      const reason = (error as { cause?: { code?: string } })?.cause?.code ?? (error as Error)?.message;
      throw new ChatConnectionError(
        `${label} could not reach ${this.baseUrl}${reason ? ` (${reason})` : ""}. ` +
          "Check that the service runs there (`chat-cli serve` starts a local one) or set CHAT_API_URL.",
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** Parses a 2xx body with its wire schema; a body that is not JSON or breaks the schema names what is wrong. */
function parseBody<S extends z.ZodType>(schema: S, text: string, label: string): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ResponseValidationError(
      `${label} answered with a body that is not JSON${text ? "" : " (empty)"}. Is the base URL a chat service?`,
      [],
      text,
    );
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const shown = issues
    .slice(0, 3)
    .map((issue) => `${issuePath(issue.path)}: ${issue.message}`)
    .join("; ");
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  throw new ResponseValidationError(
    `${label} answered with a body that breaks the wire format: ${shown}${more}. ` +
      "The service and this client disagree; update chat-mcp-bridge or report it.",
    issues,
    json,
  );
}

/** An id as one path segment: encoded, and never empty (an empty id would address another endpoint). */
function pathId(name: string, value: string): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`${name} must be a non-empty string`);
  return encodeURIComponent(value);
}

function queryString(params: Record<string, string | number | undefined>): string {
  let out = "";
  for (const key in params) {
    const value = params[key];
    if (value === undefined || value === "") continue;
    out += `${out ? "&" : "?"}${key}=${encodeURIComponent(String(value))}`;
  }
  return out;
}

/** Lower-cased merge so `Authorization` and `authorization` are one header; null removes, undefined is skipped. */
function mergeHeaders(
  base: Record<string, string>,
  extra: HeadersOption | undefined,
): Record<string, string> {
  if (!extra) return base;
  const merged = { ...base };
  for (const [name, value] of Object.entries(extra)) {
    const key = name.toLowerCase();
    if (value === null) delete merged[key];
    else if (value !== undefined) merged[key] = value;
  }
  return merged;
}
