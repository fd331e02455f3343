/** The service's chat rules, once, behind `/v2`, `/mcp`, the pages and the msw handlers. */
import {
  type Chat,
  type ConfirmedStepsTask,
  type CreateChatBody,
  LIMIT_DEFAULT,
  LIMIT_MAX,
  type ListChatsParams,
  type ListMessagesParams,
  type ListPage,
  type Message,
  type OtherTask,
  type Preview,
  pendingTaskOf,
  sameNames,
  samePermissions,
  type Task,
  TaskSchema,
} from "../wire/index.js";
import { type AssistantTurn, ScriptedAssistant } from "./assistant.js";
import {
  type Account,
  type AssistantWatch,
  type ChatService,
  type Principal,
  ServiceError,
} from "./context.js";
import { newId } from "./ids.js";
import type { Store, StoredChat } from "./store.js";

export interface ChatServiceOptions {
  store: Store;
  accounts: ReadonlyMap<string, Account>;
  /** Read on every call, so links follow the address the server ended up listening on. */
  baseUrl: () => string;
  /** How long the assistant thinks before each reply (create, send, resolve); default 0. */
  assistantDelayMs?: number;
}

/** `${base}/<slug>/chats/<id>`: the chat's page, scoped to its account or team. */
export function chatPageUrl(baseUrl: string, accountSlug: string, chatId: string): string {
  return `${baseUrl}/${encodeURIComponent(accountSlug)}/chats/${encodeURIComponent(chatId)}`;
}

const TITLE_LENGTH = 60;

/** How often a slow assistant's progress is reported: every 5 s, or four times in a shorter wait. */
function progressIntervalMs(totalMs: number): number {
  return Math.max(50, Math.min(5000, Math.floor(totalMs / 4)));
}

export class ReferenceChatService implements ChatService {
  readonly #store: Store;
  readonly #accounts: ReadonlyMap<string, Account>;
  readonly #baseUrl: () => string;
  readonly #assistant = new ScriptedAssistant();
  readonly #assistantDelayMs: number;

  constructor(options: ChatServiceOptions) {
    this.#store = options.store;
    this.#accounts = options.accounts;
    this.#baseUrl = options.baseUrl;
    this.#assistantDelayMs = options.assistantDelayMs ?? 0;
  }

  /**
   * The assistant's thinking time, before anything is read or written, so the reply reflects the state after it.
   * `onProgress` hears each step (thinking, then `middle` when the task has one, then writing) and a heartbeat at
   * a steady interval, never after the wait is over. An aborted `signal` ends the wait with its reason, so the
   * call writes nothing: a cancelled call did not happen, and running it again makes one chat, not two.
   */
  async #think(watch: AssistantWatch | undefined, middle?: string): Promise<void> {
    const { onProgress, signal } = watch ?? {};
    signal?.throwIfAborted();
    const total = this.#assistantDelayMs;
    if (total <= 0) return;
    const started = Date.now();
    const phases = [
      "The assistant is thinking",
      ...(middle ? [middle] : []),
      "The assistant is writing its reply",
    ];
    const report = () => {
      const progress = Math.min(total, Date.now() - started);
      const phase = phases[Math.min(phases.length - 1, Math.floor((progress / total) * phases.length))]!;
      onProgress?.({ progress, total, message: phase });
    };
    report();
    const heartbeat = onProgress ? setInterval(report, progressIntervalMs(total)) : undefined;
    let onAbort: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, total);
        onAbort = () => {
          clearTimeout(timer);
          reject(signal?.reason);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    } finally {
      clearInterval(heartbeat);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  async createChat(principal: Principal, body: CreateChatBody, watch?: AssistantWatch): Promise<Chat> {
    await this.#think(watch);
    const account = this.#accountOf(principal);
    const now = new Date().toISOString();
    const chat: StoredChat = {
      id: newId("chat"),
      account: account.slug,
      title: body.title ?? titleFrom(body.message),
      createdAt: now,
      updatedAt: now,
      projectId: newId("prj"),
      ...(account.hostProjectId ? { hostProjectId: account.hostProjectId } : {}),
      seq: this.#store.nextSeq(),
    };
    this.#store.batch(() => {
      this.#store.saveChat(chat);
      this.#converse(chat, body.message);
    });
    return this.chatView(chat);
  }

  async listChats(principal: Principal, params: ListChatsParams): Promise<ListPage<Chat>> {
    const account = this.#accountOf(principal);
    const limit = checkLimit(params.limit);
    const before =
      params.cursor === undefined ? Number.POSITIVE_INFINITY : decodeCursor(params.cursor, "chats");
    const topic = params.topic?.trim().toLowerCase();
    const matching = this.#store
      .chatsOf(account.slug)
      .filter((chat) => chat.seq < before)
      .filter((chat) => !topic || this.#mentions(chat, topic));
    const page = matching.slice(0, limit);
    const last = page[page.length - 1];
    return {
      object: "list",
      data: page.map((chat) => this.chatView(chat)),
      nextCursor: matching.length > limit && last ? encodeCursor("chats", last.seq) : null,
    };
  }

  async getChat(principal: Principal, chatId: string): Promise<Chat> {
    return this.chatView(this.#ownChat(principal, chatId));
  }

  async listMessages(
    principal: Principal,
    chatId: string,
    params: ListMessagesParams,
  ): Promise<ListPage<Message>> {
    const chat = this.#ownChat(principal, chatId);
    const limit = checkLimit(params.limit);
    const messages = this.#store.messagesOf(chat.id);
    const before = params.cursor === undefined ? messages.length : decodeCursor(params.cursor, "messages");
    const end = Math.min(before, messages.length);
    const start = Math.max(0, end - limit);
    return {
      object: "list",
      data: messages.slice(start, end).reverse(),
      nextCursor: start > 0 ? encodeCursor("messages", start) : null,
    };
  }

  async getMessage(principal: Principal, chatId: string, messageId: string): Promise<Message> {
    const chat = this.#ownChat(principal, chatId);
    const message = this.#store.messagesOf(chat.id).find((candidate) => candidate.id === messageId);
    if (!message) throw new ServiceError("not_found", `No message ${messageId} in chat ${chatId}.`);
    return message;
  }

  async sendMessage(
    principal: Principal,
    chatId: string,
    body: { message: string },
    watch?: AssistantWatch,
  ): Promise<Message> {
    await this.#think(watch);
    const chat = this.#ownChat(principal, chatId);
    return this.#store.batch(() => this.#converse(chat, body.message));
  }

  async resolveTask(
    principal: Principal,
    chatId: string,
    input: Task | OtherTask,
    watch?: AssistantWatch,
  ): Promise<Message> {
    await this.#think(watch, "The assistant is waiting on the integrations");
    const chat = this.#ownChat(principal, chatId);
    const parsed = TaskSchema.safeParse(input);
    if (!parsed.success) {
      throw new ServiceError(
        "bad_request",
        `Malformed task: ${parsed.error.issues[0]?.message ?? "invalid"}.`,
      );
    }
    const task = parsed.data as Task;
    if (
      task.type === "confirmed-permissions" &&
      Array.isArray(task.permissions) &&
      task.permissions.length === 0
    ) {
      throw new ServiceError(
        "unprocessable",
        "confirmed-permissions needs the pending permissions; to reject them, send another message instead.",
      );
    }
    const latest = this.latestAssistantMessage(chat.id);
    const pending = pendingTaskOf(latest);
    if (!pending || !chat.pause || !latest) {
      throw conflict("The chat is not waiting for a task any more.", latest);
    }
    const pause = chat.pause;
    if (pending.kind === "integration") {
      if (task.type !== "confirmed-steps") {
        throw conflict(`The chat waits for confirmed-steps, not ${task.type}.`, latest);
      }
      const steps = task as ConfirmedStepsTask;
      const names = steps.connectedIntegrationNames;
      const presets = steps.connectedMcpPresetNames ?? [];
      // Both lists empty rejects the request; otherwise each must be exactly what was requested.
      if (names.length === 0 && presets.length === 0) {
        return this.#answer(chat, this.#assistant.integrationsRejected(pause));
      }
      if (!sameNames(pending.integrations, names)) {
        throw conflict(
          `connectedIntegrationNames must be exactly the requested ones: ${JSON.stringify(pending.integrations)}.`,
          latest,
        );
      }
      if (!sameNames(pending.mcpPresets, presets)) {
        throw conflict(
          `connectedMcpPresetNames must be exactly the requested ones: ${JSON.stringify(pending.mcpPresets)}.`,
          latest,
        );
      }
      return this.#answer(chat, this.#assistant.integrationsConnected(pause));
    }
    if (task.type !== "confirmed-permissions") {
      throw conflict(`The chat waits for confirmed-permissions, not ${task.type}.`, latest);
    }
    const permissions = (task as { permissions: typeof pending.permissions }).permissions;
    if (!samePermissions(pending.permissions, permissions)) {
      throw conflict("permissions must equal the pending suggestedPermissions, unchanged.", latest);
    }
    return this.#answer(chat, this.#assistant.permissionsApproved(pause));
  }

  async getPreview(principal: Principal, chatId: string): Promise<Preview> {
    const chat = this.#ownChat(principal, chatId);
    return {
      object: "preview",
      chatId: chat.id,
      url: `${chatPageUrl(this.#baseUrl(), chat.account, chat.id)}/preview`,
    };
  }

  /** The wire form of a stored chat. */
  chatView(chat: StoredChat): Chat {
    return {
      id: chat.id,
      object: "chat",
      title: chat.title,
      createdAt: chat.createdAt,
      updatedAt: chat.updatedAt,
      ...(chat.hostProjectId ? { hostProjectId: chat.hostProjectId } : {}),
      projectId: chat.projectId,
      url: chatPageUrl(this.#baseUrl(), chat.account, chat.id),
    };
  }

  latestAssistantMessage(chatId: string): Message | undefined {
    return this.#store.messagesOf(chatId).findLast((message) => message.role === "assistant");
  }

  /** Stores the user's message (rejecting any pending request) and the assistant's reply. */
  #converse(chat: StoredChat, text: string): Message {
    const dropped = chat.pause;
    this.#append(chat, { role: "user", content: text, parts: [{ type: "text", text }], finishReason: null });
    return this.#answer(chat, this.#assistant.reply(text, dropped));
  }

  #answer(chat: StoredChat, turn: AssistantTurn): Message {
    return this.#store.batch(() =>
      this.#append(
        chat,
        { role: "assistant", content: turn.content, parts: turn.parts, finishReason: turn.finishReason },
        turn.pause,
      ),
    );
  }

  #append(
    chat: StoredChat,
    fields: Pick<Message, "role" | "content" | "parts" | "finishReason">,
    pause?: StoredChat["pause"],
  ): Message {
    const now = new Date().toISOString();
    const message: Message = {
      id: newId("msg"),
      object: "message",
      chatId: chat.id,
      ...fields,
      createdAt: now,
    };
    this.#store.appendMessage(chat.id, message);
    chat.updatedAt = now;
    chat.seq = this.#store.nextSeq();
    if (pause) chat.pause = pause;
    else delete chat.pause;
    this.#store.saveChat(chat);
    return message;
  }

  #mentions(chat: StoredChat, topic: string): boolean {
    if (chat.title.toLowerCase().includes(topic)) return true;
    return this.#store
      .messagesOf(chat.id)
      .some((message) => (message.content ?? "").toLowerCase().includes(topic));
  }

  #accountOf(principal: Principal): Account {
    const account = this.#accounts.get(principal.account);
    if (!account)
      throw new ServiceError("forbidden", `The credential's account ${principal.account} does not exist.`);
    return account;
  }

  /** The chat when it belongs to the principal's account or team; another team's chat is indistinguishable from none. */
  #ownChat(principal: Principal, chatId: string): StoredChat {
    const account = this.#accountOf(principal);
    const chat = this.#store.getChat(chatId);
    if (!chat || chat.account !== account.slug) throw new ServiceError("not_found", `No chat ${chatId}.`);
    return chat;
  }
}

function conflict(reason: string, latest: Message | undefined): ServiceError {
  return new ServiceError(
    "conflict",
    `${reason} Re-read the latest assistant message and resolve what it asks for now.`,
    latest ? { latestMessageId: latest.id } : {},
  );
}

function titleFrom(message: string): string {
  const line = message.trim().split("\n")[0]?.replace(/\s+/g, " ") ?? "";
  if (!line) return "Untitled chat";
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 3)}...` : line;
}

function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return LIMIT_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX) {
    throw new ServiceError("bad_request", `limit must be an integer from 1 to ${LIMIT_MAX}.`);
  }
  return limit;
}

type CursorKind = "chats" | "messages";

function encodeCursor(kind: CursorKind, position: number): string {
  return Buffer.from(JSON.stringify({ k: kind, p: position })).toString("base64url");
}

function decodeCursor(cursor: string, kind: CursorKind): number {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as {
      k?: unknown;
      p?: unknown;
    };
    if (value.k === kind && typeof value.p === "number" && Number.isInteger(value.p) && value.p >= 0)
      return value.p;
  } catch {
    // fall through to the error below
  }
  throw new ServiceError("bad_request", "cursor is not a nextCursor of this list; start again without it.");
}
