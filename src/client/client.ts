/** ChatClient: the typed SDK of the /v2 API, with validated responses, typed errors, retries, pages and flow helpers. */
import type { KyInstance } from "ky";
import type * as z from "zod";
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
  type OtherTask,
  type PendingTask,
  type Preview,
  PreviewSchema,
  pendingTaskOf,
  rejectedStepsFor,
  type SendMessageBody,
  type Task,
} from "../wire/index.js";
import { APIPromise } from "./api-promise.js";
import { MissingHostProjectError, NoPendingTaskError } from "./errors.js";
import { ClientLog, type Logger, type LogLevel } from "./logger.js";
import { Page, PagePromise } from "./pagination.js";
import {
  type TransportCall as Call,
  createKy,
  DEFAULT_MAX_RETRIES,
  envVar,
  type FetchLike,
  failureOf,
  type HeadersOption,
  HTTPError,
  type HttpMethod,
  mergeHeaders,
  newIdempotencyKey,
  nodeExtras,
  onNode,
  parseBody,
  pathId,
  queryString,
  retryPolicy,
  SDK_VERSION,
} from "./transport.js";

export type { FetchLike, HeadersOption, Logger, LogLevel };

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
  /** Where log lines go: anything with debug/info/warn/error (pino, winston...). Default `console`. */
  logger?: Logger;
  /**
   * How much is logged: "off", "error", "warn", "info" (each retry) or "debug" (each request and answer: method,
   * URL, status, request id, time, retry). Default `$CHAT_LOG`, else "warn". Never a token, a key or a body.
   */
  logLevel?: LogLevel;
}

/** Options only this package passes (its tests, chat-cli). Not part of the public API. */
export interface ClientTestOptions extends ChatClientOptions {
  /** The retry waits, recorded instead of slept. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The timeout of create, send and resolve, exactly (chat-cli's --timeout bounds every request). */
  waitTimeoutMs?: number;
}

/** The optional last argument of every method. */
export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  headers?: HeadersOption;
  /**
   * The `Idempotency-Key` of a create, send or resolve (default: a new random key per call, the same on each of
   * its retries). Pass the key of a call whose answer was lost to get that answer without running it twice.
   */
  idempotencyKey?: string;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
/** Per attempt, for the calls that wait for the assistant's reply, which can take minutes (as Stainless SDKs allow). */
export const DEFAULT_WAIT_TIMEOUT_MS = 600_000;

/** Where ChatClient goes without `baseUrl` or `$CHAT_API_URL`: a local reference server (`chat-cli serve`). */
const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

/** `chat-mcp-bridge/<version>`, and the runtime where it says (Node, Bun, Deno); a browser sends its own. */
function userAgent(): string {
  const versions = (globalThis as { process?: { versions?: Record<string, string | undefined> } }).process
    ?.versions;
  const runtime = ["bun", "deno", "node"].find((name) => versions?.[name]);
  return `chat-mcp-bridge/${SDK_VERSION}${runtime ? ` ${runtime}/${versions?.[runtime]}` : ""}`;
}

/** Where the token in effect came from: the option, `$CHAT_API_KEY`, or the `chat-cli login` credentials (Node). */
type TokenSource = "given" | "env" | "login";

/** A call's path without its query, for labels; "(bad arguments)" when the path itself cannot be made. */
function labelPath(path: () => string): string {
  try {
    return path().split("?")[0] as string;
  } catch {
    return "(bad arguments)";
  }
}

export class ChatClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** The timeout of create, send and resolve, which wait for the assistant. */
  readonly waitTimeoutMs: number;
  readonly maxRetries: number;
  readonly validateResponses: boolean;
  readonly #log: ClientLog;
  readonly #ky: KyInstance;
  readonly #sleep: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  readonly #defaultHeaders: Record<string, string>;
  readonly #givenToken: string | undefined;
  #tokenSource: TokenSource | undefined;
  /** Headers of every GET and POST, authorization included once the token is known; built once, not per call. */
  #getHeaders: Record<string, string> | undefined;
  #postHeaders: Record<string, string> | undefined;
  #tokenLoad: Promise<void> | undefined;

  constructor(options: ChatClientOptions = {}) {
    const baseUrl = (options.baseUrl ?? (envVar("CHAT_API_URL")?.trim() || DEFAULT_BASE_URL)).replace(
      /\/+$/,
      "",
    );
    if (!URL.canParse(baseUrl))
      throw new TypeError(`ChatClient: baseUrl ${JSON.stringify(baseUrl)} is not a URL`);
    this.baseUrl = baseUrl;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.waitTimeoutMs =
      (options as ClientTestOptions).waitTimeoutMs ?? Math.max(this.timeoutMs, DEFAULT_WAIT_TIMEOUT_MS);
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.validateResponses = options.validateResponses ?? true;
    if (options.proxy !== undefined && options.fetch === undefined && !onNode())
      throw new TypeError(
        "ChatClient: the proxy option works on Node only; elsewhere pass a fetch that uses your proxy " +
          "(Bun's and Deno's own fetch read HTTPS_PROXY)",
      );
    this.#log = new ClientLog(
      options.logger,
      options.logLevel,
      options.logLevel === undefined ? envVar("CHAT_LOG") : undefined,
    );
    this.#ky = createKy(options.fetch, options.proxy, this.#log);
    this.#sleep = (options as ClientTestOptions).sleep;
    this.#defaultHeaders = mergeHeaders(
      { accept: "application/json", "user-agent": userAgent() },
      options.headers,
    );
    this.#givenToken = options.token;
  }

  // ---- chats -------------------------------------------------------------------------------------------

  /** Starts a chat; resolves once the assistant has answered the first message. */
  createChat(body: CreateChatBody, options?: RequestOptions): APIPromise<Chat> {
    return this.#call("POST", () => "/v2/chats", ChatSchema, options, body);
  }

  /** Chats of the credential's account or team, newest-updated first; `for await` it to walk every page. */
  listChats(params: ListChatsParams = {}, options?: RequestOptions): PagePromise<Chat> {
    const query = { topic: params.topic, limit: params.limit };
    return this.#list(() => "/v2/chats", query, ChatListSchema, params.cursor, options);
  }

  getChat(chatId: string, options?: RequestOptions): APIPromise<Chat> {
    return this.#call("GET", () => `/v2/chats/${pathId("chatId", chatId)}`, ChatSchema, options);
  }

  getPreview(chatId: string, options?: RequestOptions): APIPromise<Preview> {
    return this.#call("GET", () => `/v2/chats/${pathId("chatId", chatId)}/preview`, PreviewSchema, options);
  }

  // ---- messages ----------------------------------------------------------------------------------------

  /** Messages of a chat, newest first; `for await` it to walk every page. */
  listMessages(
    chatId: string,
    params: ListMessagesParams = {},
    options?: RequestOptions,
  ): PagePromise<Message> {
    const path = () => `/v2/chats/${pathId("chatId", chatId)}/messages`;
    return this.#list(path, { limit: params.limit }, MessageListSchema, params.cursor, options);
  }

  /** The page at `cursor` of a list endpoint, able to fetch the pages after it. */
  #list<T>(
    path: () => string,
    query: Record<string, string | number | undefined>,
    schema: z.ZodType<{ data: T[]; nextCursor?: string | null | undefined }>,
    cursor: string | undefined,
    options: RequestOptions | undefined,
  ): PagePromise<T> {
    const fetchPage = (cursor: string | undefined): PagePromise<T> =>
      new PagePromise(
        this.#answer("GET", () => `${path()}${queryString({ ...query, cursor })}`, options),
        async (response) =>
          new Page(await this.#parse(response, schema, `GET ${labelPath(path)}`), fetchPage, cursor),
      );
    return fetchPage(cursor);
  }

  getMessage(chatId: string, messageId: string, options?: RequestOptions): APIPromise<Message> {
    const path = () => `/v2/chats/${pathId("chatId", chatId)}/messages/${pathId("messageId", messageId)}`;
    return this.#call("GET", path, MessageSchema, options);
  }

  /** Sends a message; resolves to the assistant's reply. While the chat is paused, this rejects the pending request. */
  sendMessage(chatId: string, body: SendMessageBody, options?: RequestOptions): APIPromise<Message> {
    const path = () => `/v2/chats/${pathId("chatId", chatId)}/messages`;
    return this.#call("POST", path, MessageSchema, options, body);
  }

  /** Resolves the pause of the latest blocked assistant message; the task is sent unchanged, the service judges it. */
  resolveTask(chatId: string, task: Task | OtherTask, options?: RequestOptions): APIPromise<Message> {
    const path = () => `/v2/chats/${pathId("chatId", chatId)}/messages/resolve`;
    return this.#call("POST", path, MessageSchema, options, { task });
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
   * `MissingHostProjectError` when it has no `hostProjectId`; neither sends anything.
   */
  confirmIntegrations(
    chatId: string,
    names?: readonly string[],
    options?: RequestOptions,
  ): APIPromise<Message> {
    return APIPromise.after(
      (async () => {
        const [pending, chat] = await Promise.all([
          this.#expectPending(chatId, "integration", options),
          this.getChat(chatId, options),
        ]);
        if (!chat.hostProjectId) throw new MissingHostProjectError(chatId);
        return { call: this.resolveTask(chatId, confirmedStepsFor(pending, names), options) };
      })(),
    );
  }

  /** Rejects the pending integration request (`confirmed-steps` with no names); the assistant goes on without it. */
  rejectIntegrations(chatId: string, options?: RequestOptions): APIPromise<Message> {
    return APIPromise.after(
      this.#expectPending(chatId, "integration", options).then((pending) => ({
        call: this.resolveTask(chatId, rejectedStepsFor(pending), options),
      })),
    );
  }

  /** Approves the pending script permissions, passed back exactly as the assistant suggested them. */
  approvePermissions(chatId: string, options?: RequestOptions): APIPromise<Message> {
    return APIPromise.after(
      this.#expectPending(chatId, "permissions", options).then((pending) => ({
        call: this.resolveTask(chatId, approvedPermissionsFor(pending), options),
      })),
    );
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

  /** The token by the one precedence (the option, `$CHAT_API_KEY`, on Node the `chat-cli login` credentials), read once. */
  #loadToken(): Promise<void> {
    this.#tokenLoad ??= this.#resolveToken().then(
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

  async #resolveToken(): Promise<{ token: string; source: TokenSource } | undefined> {
    const given = this.#givenToken?.trim();
    if (given) return { token: given, source: "given" };
    const fromEnv = envVar("CHAT_API_KEY")?.trim();
    if (fromEnv) return { token: fromEnv, source: "env" };
    const stored = await (await nodeExtras())?.storedToken(this.baseUrl);
    return stored ? { token: stored, source: "login" } : undefined;
  }

  /** One call: its answer (sent now) and how its body is parsed (when the result is asked for). */
  #call<S extends z.ZodType>(
    method: HttpMethod,
    path: () => string,
    schema: S,
    options: RequestOptions | undefined,
    body?: unknown,
  ): APIPromise<z.output<S>> {
    return new APIPromise(this.#answer(method, path, options, body), (response) =>
      this.#parse(response, schema, `${method} ${labelPath(path)}`),
    );
  }

  async #parse<S extends z.ZodType>(response: Response, schema: S, label: string): Promise<z.output<S>> {
    return parseBody(this.validateResponses ? schema : undefined, await response.text(), label);
  }

  /**
   * The 2xx answer of one call, its body read but not parsed; rejects with the typed error. A POST carries one
   * `Idempotency-Key` across all its attempts (the token re-read included), so the service runs it at most once.
   */
  async #answer(
    method: HttpMethod,
    pathOf: () => string,
    options: RequestOptions | undefined,
    body?: unknown,
  ): Promise<Response> {
    // In here, so a bad argument (an empty id) rejects the call's promise rather than throwing where it is made.
    const path = pathOf();
    if (this.#getHeaders === undefined) await this.#loadToken();
    const label = `${method} ${path.split("?")[0]}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    // A key given in `headers` wins; `null` there removes it (and with it the retries of a POST that may have run).
    const given = Object.entries(options?.headers ?? {}).find(
      ([name]) => name.toLowerCase() === "idempotency-key",
    );
    const key =
      method !== "POST" || given?.[1] === null
        ? undefined
        : (given?.[1] ?? options?.idempotencyKey ?? newIdempotencyKey());
    const call: Call = { method, path, label, payload, idempotencyKey: key };
    try {
      return await this.#send(call, options);
    } catch (error) {
      // A stored OAuth token may have expired since it was read: read it again (refreshing it) once.
      if (!(error instanceof HTTPError) || error.response.status !== 401 || this.#tokenSource !== "login")
        throw await this.#failure(error, call, options);
      const before = this.#getHeaders?.authorization;
      this.#tokenLoad = undefined;
      await this.#loadToken();
      if (!this.#getHeaders?.authorization || this.#getHeaders.authorization === before)
        throw await this.#failure(error, call, options);
    }
    try {
      return await this.#send(call, options);
    } catch (error) {
      throw await this.#failure(error, call, options);
    }
  }

  /** One call through ky, which sends, times out and retries each attempt as `retryPolicy` decides; resolves to a 2xx. */
  async #send(call: Call, options: RequestOptions | undefined): Promise<Response> {
    const { method } = call;
    const signal = options?.signal;
    signal?.throwIfAborted();
    let headers = (method === "GET" ? this.#getHeaders : this.#postHeaders) as Record<string, string>;
    if (call.idempotencyKey !== undefined) headers = { ...headers, "idempotency-key": call.idempotencyKey };
    if (options?.headers) headers = mergeHeaders(headers, options.headers);
    // A key removed by the caller's headers (`{ "idempotency-key": null }`) makes the POST unsafe to repeat again.
    const keyed = method === "GET" || "idempotency-key" in headers;
    return this.#ky(this.baseUrl + call.path, {
      method,
      headers,
      body: call.payload,
      signal,
      timeout: this.#timeoutMs(method, options),
      retry: retryPolicy({
        method,
        label: call.label,
        keyed,
        idempotencyKey: headers["idempotency-key"],
        limit: options?.maxRetries ?? this.maxRetries,
        signal,
        log: this.#log,
        sleep: this.#sleep,
      }),
    });
  }

  /** Every POST of /v2 (create, send, resolve) waits for the assistant's reply: those get the long timeout. */
  #timeoutMs(method: HttpMethod, options: RequestOptions | undefined): number {
    return options?.timeoutMs ?? (method === "POST" ? this.waitTimeoutMs : this.timeoutMs);
  }

  #failure(error: unknown, call: Call, options: RequestOptions | undefined) {
    const timeoutMs = this.#timeoutMs(call.method, options);
    return failureOf(error, {
      label: call.label,
      baseUrl: this.baseUrl,
      timeoutMs,
      signal: options?.signal,
      idempotencyKey: call.idempotencyKey,
    });
  }
}
