/** ChatClient: the typed SDK of the /v2 API, with validated responses, typed errors, retries, pages and flow helpers. */
import type * as z from "zod";
import { type RestTokenSource, resolveRestToken } from "../auth/rest-token.js";
import { defaultBaseUrl } from "../config/index.js";
import {
  approvedPermissionsFor,
  type Chat,
  ChatListSchema,
  ChatSchema,
  type CreateChatBody,
  confirmedStepsFor,
  type ListChatsParams,
  type ListMessagesParams,
  type Message,
  MessageListSchema,
  MessageSchema,
  type PendingTask,
  type Preview,
  PreviewSchema,
  pendingTaskOf,
  rejectedStepsFor,
  type Task,
} from "../wire/index.js";
import { MissingHostProjectError, NoPendingTaskError } from "./errors.js";
import { Page, PagePromise } from "./pagination.js";
import {
  DEFAULT_MAX_RETRIES,
  type HttpMethod,
  retriesFailure,
  retriesStatus,
  retryDelayMs,
} from "./retry.js";
import {
  createKy,
  type FetchLike,
  failureOf,
  type HeadersOption,
  HTTPError,
  mergeHeaders,
  parseBody,
  pathId,
  queryString,
  TimeoutError,
} from "./transport.js";

export type { FetchLike, HeadersOption };

export interface ChatClientOptions {
  /** Service root, without `/v2`. Default: `$CHAT_API_URL`, else `http://127.0.0.1:8787`. */
  baseUrl?: string;
  /** Bearer token (API key or OAuth access token). Default: `$CHAT_API_KEY`, else the `chat-cli login` credentials. */
  token?: string;
  /** Default: the global `fetch`, looked up on each call. */
  fetch?: FetchLike;
  /**
   * Time allowed for each attempt of a read, until the whole body has arrived. Default 60 000 ms. The calls that
   * wait for the assistant (create, send, resolve) get 10 minutes (or this, if longer); pass `timeoutMs` to one
   * call to change its timeout.
   */
  timeoutMs?: number;
  /** Retries after the first attempt (see README: GETs on failures, POSTs only when not run). Default 2. */
  maxRetries?: number;
  /** Headers sent with every request. */
  headers?: HeadersOption;
  /**
   * Check each 2xx body against the wire schemas (default true). Checks are lenient (unknown fields, part types
   * and finish reasons pass; only `id` and a message's `parts` are required); false returns the parsed JSON as is.
   */
  validateResponses?: boolean;
  /**
   * The proxy for every request (an http(s) URL, credentials in it sent as Basic auth), or `false` for none.
   * Default: `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` (or lowercase) from the environment. Loopback is never
   * proxied. Ignored when you pass your own `fetch`.
   */
  proxy?: string | false;
  /** Waits between retries instead of ky's timer; a test seam (tests record the waits instead of sleeping). */
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
/** Per attempt, for the calls that wait for the assistant's reply, which can take minutes (as Stainless SDKs allow). */
export const DEFAULT_WAIT_TIMEOUT_MS = 600_000;

const USER_AGENT = `chat-mcp-bridge node/${globalThis.process?.versions?.node ?? "unknown"}`;

export class ChatClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** The timeout of create, send and resolve, which wait for the assistant. */
  readonly waitTimeoutMs: number;
  readonly maxRetries: number;
  readonly validateResponses: boolean;
  readonly #ky: ReturnType<typeof createKy>;
  readonly #sleep: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  readonly #defaultHeaders: Record<string, string>;
  readonly #givenToken: string | undefined;
  #tokenSource: RestTokenSource | undefined;
  /** Headers of every GET and POST, authorization included once the token is known; built once, not per call. */
  #getHeaders: Record<string, string> | undefined;
  #postHeaders: Record<string, string> | undefined;
  #tokenLoad: Promise<void> | undefined;

  constructor(options: ChatClientOptions = {}) {
    const baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/+$/, "");
    if (!URL.canParse(baseUrl))
      throw new TypeError(`ChatClient: baseUrl ${JSON.stringify(baseUrl)} is not a URL`);
    this.baseUrl = baseUrl;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.waitTimeoutMs = Math.max(this.timeoutMs, DEFAULT_WAIT_TIMEOUT_MS);
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.validateResponses = options.validateResponses ?? true;
    this.#ky = createKy(options.fetch, options.proxy);
    this.#sleep = options.sleep;
    this.#defaultHeaders = mergeHeaders(
      { accept: "application/json", "user-agent": USER_AGENT },
      options.headers,
    );
    this.#givenToken = options.token;
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
   * Confirms the requested integrations as connected: by default exactly the names the assistant asked for, and
   * always the requested MCP presets with them. Names given are sent as they are (the service answers 409 when
   * they differ from the request). Throws `NoPendingTaskError` when the chat does not wait for integrations, and
   * `MissingHostProjectError` when it has no `hostProjectId` (seed §4 rule 4); neither sends anything.
   */
  async confirmIntegrations(
    chatId: string,
    names?: readonly string[],
    options?: RequestOptions,
  ): Promise<Message> {
    const [pending, chat] = await Promise.all([
      this.#expectPending(chatId, "integration", options),
      this.getChat(chatId, options),
    ]);
    if (!chat.hostProjectId) throw new MissingHostProjectError(chatId);
    return this.resolveTask(chatId, confirmedStepsFor(pending, names), options);
  }

  /** Rejects the pending integration request (`confirmed-steps` with no names); the assistant goes on without it. */
  async rejectIntegrations(chatId: string, options?: RequestOptions): Promise<Message> {
    const pending = await this.#expectPending(chatId, "integration", options);
    return this.resolveTask(chatId, rejectedStepsFor(pending), options);
  }

  /** Approves the pending script permissions, passed back exactly as the assistant suggested them. */
  async approvePermissions(chatId: string, options?: RequestOptions): Promise<Message> {
    const pending = await this.#expectPending(chatId, "permissions", options);
    return this.resolveTask(chatId, approvedPermissionsFor(pending), options);
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

  /** The token by the one precedence (the option, `$CHAT_API_KEY`, the `chat-cli login` credentials), read once. */
  #loadToken(): Promise<void> {
    this.#tokenLoad ??= resolveRestToken(this.baseUrl, { token: this.#givenToken }).then(
      (resolved) => {
        this.#tokenSource = resolved?.source;
        this.#useToken(resolved?.token);
      },
      () => {
        this.#tokenSource = undefined;
        this.#useToken(undefined);
      },
    );
    return this.#tokenLoad;
  }

  async #request<S extends z.ZodType>(
    method: HttpMethod,
    path: string,
    schema: S,
    options: RequestOptions | undefined,
    body?: unknown,
  ): Promise<z.output<S>> {
    if (this.#getHeaders === undefined) await this.#loadToken();
    const label = `${method} ${path.split("?")[0]}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const checkedBy = this.validateResponses ? schema : undefined;
    try {
      return parseBody(checkedBy, await this.#send(method, path, payload, options), label);
    } catch (error) {
      // A stored OAuth token may have expired since it was read: read it again (refreshing it) once.
      if (!(error instanceof HTTPError) || error.response.status !== 401 || this.#tokenSource !== "login")
        throw await this.#failure(error, method, label, options);
      const before = this.#getHeaders?.authorization;
      this.#tokenLoad = undefined;
      await this.#loadToken();
      if (!this.#getHeaders?.authorization || this.#getHeaders.authorization === before)
        throw await this.#failure(error, method, label, options);
    }
    try {
      return parseBody(checkedBy, await this.#send(method, path, payload, options), label);
    } catch (error) {
      throw await this.#failure(error, method, label, options);
    }
  }

  /**
   * One call through ky: ky sends, times each attempt out and schedules the retries; our policy decides which
   * failures are retried (a POST only when it certainly never ran) and how long to wait (`Retry-After`, else
   * backoff with full jitter). Resolves to the body of a 2xx answer; rejects with ky's or fetch's error.
   */
  async #send(
    method: HttpMethod,
    path: string,
    payload: string | undefined,
    options: RequestOptions | undefined,
  ): Promise<string> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    let headers = (method === "GET" ? this.#getHeaders : this.#postHeaders) as Record<string, string>;
    if (options?.headers) headers = mergeHeaders(headers, options.headers);
    let nextDelayMs = 0;
    const response = await this.#ky(this.baseUrl + path, {
      method,
      headers,
      body: payload,
      signal,
      timeout: this.#timeoutMs(method, options),
      retry: {
        limit: options?.maxRetries ?? this.maxRetries,
        methods: ["get", "post"],
        delay: () => nextDelayMs,
        shouldRetry: async ({ error, retryCount }) => {
          if (signal?.aborted) return false;
          const answer = error instanceof HTTPError ? error.response : undefined;
          const retries = answer
            ? retriesStatus(method, answer.status)
            : retriesFailure(method, error instanceof TimeoutError ? undefined : error);
          if (!retries) return false;
          nextDelayMs = retryDelayMs(retryCount, answer?.headers.get("retry-after") ?? null);
          if (this.#sleep) {
            await this.#sleep(nextDelayMs, signal);
            nextDelayMs = 0;
          }
          return true;
        },
      },
    });
    return response.text();
  }

  /** Every POST of /v2 (create, send, resolve) waits for the assistant's reply: those get the long timeout. */
  #timeoutMs(method: HttpMethod, options: RequestOptions | undefined): number {
    return options?.timeoutMs ?? (method === "POST" ? this.waitTimeoutMs : this.timeoutMs);
  }

  #failure(error: unknown, method: HttpMethod, label: string, options: RequestOptions | undefined) {
    const timeoutMs = this.#timeoutMs(method, options);
    return failureOf(error, { label, baseUrl: this.baseUrl, timeoutMs, signal: options?.signal });
  }
}
