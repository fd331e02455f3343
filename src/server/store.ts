/** The reference server's state: in memory, optionally persisted to one JSON file with atomic writes. */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { isProcessAlive, writeFileAtomic } from "../internal/files.js";
import { type Message, MessageSchema } from "../wire/index.js";
import type { StoreCollection } from "./context.js";
import { ServiceError } from "./service-error.js";

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

/**
 * The data file could not be written (disk full, read-only, directory gone): the change was rolled back, so
 * memory and file still agree and the caller gets a 500 it may retry. The API message names no server path.
 */
export class DataFileWriteError extends ServiceError {
  constructor(
    readonly dataFile: string,
    override readonly cause: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException).code ?? "write failed";
    super("internal", `The server could not save the change (${code}); nothing was changed. Retry later.`);
  }
}

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
  /** The file's contents as last written (or loaded): what a failed write rolls memory back to. */
  #saved: string;

  constructor(options: StoreOptions = {}) {
    this.dataFile = options.dataFile;
    if (this.dataFile) {
      removeStaleTempFiles(this.dataFile);
      this.#load(this.dataFile);
    }
    this.#saved = JSON.stringify(this.#snapshot());
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
    this.batch(() => {
      this.#chats.set(chat.id, chat);
      this.#changed();
    });
  }

  /** Messages of a chat, oldest first. */
  messagesOf(chatId: string): readonly Message[] {
    return this.#messages.get(chatId) ?? [];
  }

  appendMessage(chatId: string, message: Message): void {
    this.batch(() => {
      const list = this.#messages.get(chatId) ?? [];
      list.push(message);
      this.#messages.set(chatId, list);
      this.#changed();
    });
  }

  apiKeys(): readonly ApiKey[] {
    return this.#apiKeys;
  }

  addApiKey(apiKey: ApiKey): void {
    this.batch(() => {
      this.#apiKeys.push(apiKey);
      this.#changed();
    });
  }

  isSsoVerified(subject: string): boolean {
    return this.#ssoVerified.has(subject);
  }

  markSsoVerified(subject: string): void {
    this.batch(() => {
      this.#ssoVerified.add(subject);
      this.#changed();
    });
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
        this.batch(() => {
          map.set(key, value);
          this.#changed();
        });
      },
      delete: (key) =>
        this.batch(() => {
          const existed = map.delete(key);
          if (existed) this.#changed();
          return existed;
        }),
      entries: () => [...map.entries()],
      values: () => [...map.values()],
    };
  }

  /**
   * Runs `change` and persists once at the end, so related changes land in the file together. When the file
   * cannot be written, memory is rolled back to what the file holds and `DataFileWriteError` is thrown.
   */
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
    const contents = JSON.stringify(this.#snapshot());
    try {
      writeFileAtomic(this.dataFile, `${contents}\n`);
    } catch (error) {
      console.error(
        `reference server: cannot write the data file ${this.dataFile}: ${(error as Error).message}; change rolled back`,
      );
      this.#restore(StoreFileSchema.parse(JSON.parse(this.#saved)));
      throw new DataFileWriteError(this.dataFile, error);
    }
    this.#saved = contents;
  }

  /** Puts memory back to `data`, refilling collection maps in place (other parts hold their handles). */
  #restore(data: StoreFile): void {
    this.#seq = data.seq;
    this.#chats = new Map(data.chats.map((chat) => [chat.id, chat]));
    this.#messages = new Map(Object.entries(data.messages));
    this.#apiKeys = data.apiKeys;
    this.#ssoVerified = new Set(data.ssoVerified);
    for (const [name, map] of this.#collections) {
      map.clear();
      for (const [key, value] of Object.entries(data.collections[name] ?? {})) map.set(key, value);
    }
  }

  #load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw new Error(`Cannot read the data file ${file}: ${(error as Error).message}`, { cause: error });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(`Data file ${file} is not a reference-server store: ${(error as Error).message}`);
    }
    const parsed = StoreFileSchema.safeParse(json);
    if (!parsed.success) {
      throw new Error(`Data file ${file} is not a reference-server store: ${parsed.error.message}`);
    }
    const data = parsed.data;
    this.#collections = new Map(Object.keys(data.collections).map((name) => [name, new Map()]));
    this.#restore(data);
  }
}

/** Removes `<file>.<pid>.tmp` left by a process killed mid-write (only when that process is gone). */
function removeStaleTempFiles(file: string): void {
  const dir = dirname(file);
  const prefix = `${basename(file)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^(\d+)\.tmp$/.exec(name.slice(prefix.length))?.[1]);
    if (!name.startsWith(prefix) || !Number.isInteger(pid) || pid === 0 || isProcessAlive(pid)) continue;
    rmSync(join(dir, name), { force: true });
  }
}
