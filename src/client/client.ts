/** ChatClient: the typed SDK of the /v2 API, with validated responses, typed errors, retries, pages and flow helpers. */
import ky, { HTTPError, type KyInstance, TimeoutError } from "ky";
import type { z } from "zod";
import { type RestTokenSource, resolveRestToken } from "../auth/rest-token.js";
import { defaultBaseUrl } from "../config/index.js";
import { describeNetworkFailure } from "../internal/network-errors.js";
import { proxyAwareFetch } from "../internal/proxy.js";
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
import {
  apiErrorFor,
  ChatConnectionError,
  ChatError,
  ChatTimeoutError,
  issuePath,
  MissingHostProjectError,
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
} from "./retry.js";

/** The `fetch` the client calls (through ky, with a `Request`); pass your own (a test double, an app's) as `fetch`. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Header values to add; `null` removes a default header (e.g. `{ "user-agent": null }`), undefined is skipped. */
export type HeadersOption = Record<string, string | null | undefined>;

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
  readonly #ky: KyInstance;
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
        throw await this.#failure(error, label, options);
      const before = this.#getHeaders?.authorization;
      this.#tokenLoad = undefined;
      await this.#loadToken();
      if (!this.#getHeaders?.authorization || this.#getHeaders.authorization === before)
        throw await this.#failure(error, label, options);
    }
    try {
      return parseBody(checkedBy, await this.#send(method, path, payload, options), label);
    } catch (error) {
      throw await this.#failure(error, label, options);
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

  /** The typed error for a failed call: the service's answer, a timeout, the caller's abort, or no connection. */
  async #failure(error: unknown, label: string, options: RequestOptions | undefined): Promise<unknown> {
    if (error instanceof HTTPError) {
      const { response } = error;
      return apiErrorFor(
        response.status,
        readErrorBody(await response.text()),
        response.headers,
        label,
        this.baseUrl,
      );
    }
    if (error instanceof TimeoutError) {
      const method: HttpMethod = label.startsWith("POST") ? "POST" : "GET";
      const timeoutMs = this.#timeoutMs(method, options);
      const next =
        method === "POST"
          ? "The request was sent and may still complete: check the chat's messages before sending it again, " +
            "and pass a larger timeoutMs to wait longer."
          : "Raise timeoutMs, or check that the service is reachable.";
      return new ChatTimeoutError(
        `${label} timed out after ${timeoutMs} ms with no complete answer from ${this.baseUrl}. ${next}`,
        timeoutMs,
      );
    }
    if (options?.signal?.aborted) return options.signal.reason;
    if (error instanceof ChatError || !(error instanceof Error)) return error;
    const network = describeNetworkFailure(error, this.baseUrl);
    if (network) return new ChatConnectionError(`${label} failed: ${network}`, { cause: error });
    const reason = (error as { cause?: { code?: string } }).cause?.code ?? error.message;
    return new ChatConnectionError(
      `${label} could not reach ${this.baseUrl}${reason ? ` (${reason})` : ""}. ` +
        "Check that the service runs there (`chat-cli serve` starts a local one) or set CHAT_API_URL.",
      { cause: error },
    );
  }
}

/** Answers with no body by definition; a Response built with one throws. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The ky instance of a client. Its fetch reads each answer's whole body within the attempt, so ky's per-attempt
 * timeout covers the body too. This is the one place the client's default fetch is chosen.
 */
function createKy(fetch: FetchLike | undefined, proxy: string | false | undefined): KyInstance {
  // The platform fetch, through the proxy the option or the environment chooses (nothing loads without one).
  const send: FetchLike = fetch ?? proxyAwareFetch({ proxy });
  return ky.create({
    fetch: async (input, init) => {
      const answer = await send(input, init);
      const body = NULL_BODY_STATUSES.has(answer.status) ? null : await answer.arrayBuffer();
      return new Response(body, answer);
    },
    hooks: {
      beforeRetry: [
        ({ request, retryCount }) => {
          request.headers.set("x-retry-count", String(retryCount));
        },
      ],
    },
  });
}

/** Parses a 2xx body with its wire schema (none: JSON as is); a body that is not JSON or breaks the schema names what is wrong. */
function parseBody<S extends z.ZodType>(schema: S | undefined, text: string, label: string): z.output<S> {
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
  if (!schema) return json as z.output<S>;
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
