/** The reference server's state: in memory, optionally persisted to one JSON file with atomic writes. */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { type Message, MessageSchema } from "../wire/index.js";
import type { StoreCollection } from "./context.js";

/** Where a paused chat stands in the scripted assistant's flow (internal, never on the wire). */
export const AssistantPauseSchema = z.object({
  rule: z.string(),
  stage: z.enum(["integration", "permissions"]),
  /** The user's message that started the paused request. */
  request: z.string(),
});
export type AssistantPause = z.infer<typeof AssistantPauseSchema>;

export const StoredChatSchema = z.object({
  id: z.string(),
  account: z.string(),
  title: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  projectId: z.string(),
  hostProjectId: z.string().optional(),
  /** Store-wide sequence of the last update: orders chats newest-updated first, ties impossible. */
  seq: z.number().int(),
  pause: AssistantPauseSchema.optional(),
});
export type StoredChat = z.infer<typeof StoredChatSchema>;

export const ApiKeySchema = z.object({
  id: z.string(),
  account: z.string(),
  /** Dev keys are kept in clear so `startReferenceServer()` can hand the same ones out after a restart. */
  key: z.string(),
  createdAt: z.string(),
});
export type ApiKey = z.infer<typeof ApiKeySchema>;

const StoreFileSchema = z.object({
  version: z.literal(1),
  seq: z.number().int(),
  chats: z.array(StoredChatSchema),
  messages: z.record(z.string(), z.array(MessageSchema)),
  apiKeys: z.array(ApiKeySchema),
  ssoVerified: z.array(z.string()),
  collections: z.record(z.string(), z.record(z.string(), z.unknown())),
});
type StoreFile = z.infer<typeof StoreFileSchema>;

export interface StoreOptions {
  /** JSON file to load on start and rewrite (temp file + fsync + rename) after every change. */
  dataFile?: string;
}

export class Store {
  readonly dataFile: string | undefined;
  #seq = 0;
  #chats = new Map<string, StoredChat>();
  #messages = new Map<string, Message[]>();
  #apiKeys: ApiKey[] = [];
  #ssoVerified = new Set<string>();
  #collections = new Map<string, Map<string, unknown>>();
  #batchDepth = 0;
  #dirty = false;

  constructor(options: StoreOptions = {}) {
    this.dataFile = options.dataFile;
    if (this.dataFile) this.#load(this.dataFile);
  }

  /** Next value of the store-wide sequence (monotonic across restarts). */
  nextSeq(): number {
    this.#seq += 1;
    return this.#seq;
  }

  getChat(chatId: string): StoredChat | undefined {
    return this.#chats.get(chatId);
  }

  /** Chats of one account or team, newest-updated first. */
  chatsOf(account: string): StoredChat[] {
    return [...this.#chats.values()].filter((chat) => chat.account === account).sort((a, b) => b.seq - a.seq);
  }

  /** Inserts or replaces a chat record. */
  saveChat(chat: StoredChat): void {
    this.#chats.set(chat.id, chat);
    this.#changed();
  }

  /** Messages of a chat, oldest first. */
  messagesOf(chatId: string): readonly Message[] {
    return this.#messages.get(chatId) ?? [];
  }

  appendMessage(chatId: string, message: Message): void {
    const list = this.#messages.get(chatId) ?? [];
    list.push(message);
    this.#messages.set(chatId, list);
    this.#changed();
  }

  apiKeys(): readonly ApiKey[] {
    return this.#apiKeys;
  }

  addApiKey(apiKey: ApiKey): void {
    this.#apiKeys.push(apiKey);
    this.#changed();
  }

  isSsoVerified(subject: string): boolean {
    return this.#ssoVerified.has(subject);
  }

  markSsoVerified(subject: string): void {
    this.#ssoVerified.add(subject);
    this.#changed();
  }

  /**
   * A named key/value section persisted with the rest, for parts that keep their own records
   * (the OAuth server's clients, grants and tokens). Values must survive `JSON.stringify`.
   */
  collection<T>(name: string): StoreCollection<T> {
    let entries = this.#collections.get(name);
    if (!entries) {
      entries = new Map();
      this.#collections.set(name, entries);
    }
    const map = entries as Map<string, T>;
    return {
      get: (key) => map.get(key),
      has: (key) => map.has(key),
      set: (key, value) => {
        map.set(key, value);
        this.#changed();
      },
      delete: (key) => {
        const existed = map.delete(key);
        if (existed) this.#changed();
        return existed;
      },
      entries: () => [...map.entries()],
      values: () => [...map.values()],
    };
  }

  /** Runs `change` and persists once at the end, so related changes land in the file together. */
  batch<T>(change: () => T): T {
    this.#batchDepth += 1;
    try {
      return change();
    } finally {
      this.#batchDepth -= 1;
      if (this.#batchDepth === 0 && this.#dirty) this.#persist();
    }
  }

  #changed(): void {
    this.#dirty = true;
    if (this.#batchDepth === 0) this.#persist();
  }

  #snapshot(): StoreFile {
    return {
      version: 1,
      seq: this.#seq,
      chats: [...this.#chats.values()],
      messages: Object.fromEntries(this.#messages),
      apiKeys: this.#apiKeys,
      ssoVerified: [...this.#ssoVerified],
      collections: Object.fromEntries(
        [...this.#collections].map(([name, map]) => [name, Object.fromEntries(map)]),
      ),
    };
  }

  #persist(): void {
    this.#dirty = false;
    if (!this.dataFile) return;
    writeFileAtomically(this.dataFile, `${JSON.stringify(this.#snapshot())}\n`);
  }

  #load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    const parsed = StoreFileSchema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      throw new Error(`Data file ${file} is not a reference-server store: ${parsed.error.message}`);
    }
    const data = parsed.data;
    this.#seq = data.seq;
    this.#chats = new Map(data.chats.map((chat) => [chat.id, chat]));
    this.#messages = new Map(Object.entries(data.messages));
    this.#apiKeys = data.apiKeys;
    this.#ssoVerified = new Set(data.ssoVerified);
    this.#collections = new Map(
      Object.entries(data.collections).map(([name, record]) => [name, new Map(Object.entries(record))]),
    );
  }
}

/** Write to a temp file, fsync it, rename over the target, fsync the directory: a crash leaves old or new, never half. */
function writeFileAtomically(file: string, contents: string): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, "w", 0o600);
  try {
    writeSync(fd, contents);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  try {
    const dirFd = openSync(dir, "r");
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  }
}
