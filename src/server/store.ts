/** The reference server's state: in memory, optionally persisted to a JSON snapshot plus an append-only journal. */
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import * as z from "zod";
import { isProcessAlive, writeFileAtomic } from "../internal/files.js";
import { type Message, MessageSchema } from "../wire/index.js";
import { ServiceError } from "./service-error.js";
import {
  appendJournal,
  type JournalBatch,
  type JournalOp,
  journalFileOf,
  readJournal,
  removeJournal,
} from "./store-journal.js";
import { type ApiKey, ApiKeySchema, type StoredChat, StoredChatSchema } from "./store-records.js";

export type { ApiKey, AssistantPause, StoredChat } from "./store-records.js";

/** A named key/value section of the store, persisted with everything else (values must be JSON-serialisable). */
export interface StoreCollection<T> {
  get(key: string): T | undefined;
  /** Stores (or replaces) the value and persists at once. */
  set(key: string, value: T): void;
  /** Removes the key and persists; true when it existed. */
  delete(key: string): boolean;
  has(key: string): boolean;
  entries(): Array<[string, T]>;
  values(): T[];
  /** How many keys it holds. */
  size(): number;
}

const StoreFileSchema = z.object({
  version: z.literal(1),
  seq: z.number().int(),
  chats: z.array(StoredChatSchema),
  messages: z.record(z.string(), z.array(MessageSchema)),
  apiKeys: z.array(ApiKeySchema),
  ssoVerified: z.array(z.string()),
  collections: z.record(z.string(), z.record(z.string(), z.unknown())),
  /** Id of this snapshot: the journal that continues it names it in its first line. */
  journal: z.string().optional(),
});
type StoreFile = z.infer<typeof StoreFileSchema>;

/** The journal is folded into a fresh snapshot once it outgrows the snapshot (and this floor). */
const JOURNAL_FOLD_FLOOR_BYTES = 1024 * 1024;

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
  /**
   * JSON file to load on start. Each change is appended to `<file>.journal` (one fsynced line); the journal is
   * folded into the file (temp file + fsync + rename) when it outgrows it, on start and by `compact()`.
   */
  dataFile?: string;
}

export class Store {
  readonly dataFile: string | undefined;
  #seq = 0;
  #chats = new Map<string, StoredChat>();
  /** Chat ids by account (a chat never changes account): listing one account's chats never walks another's. */
  #chatIdsOf = new Map<string, Set<string>>();
  #messages = new Map<string, Message[]>();
  #apiKeys: ApiKey[] = [];
  #ssoVerified = new Set<string>();
  #collections = new Map<string, Map<string, unknown>>();
  #batchDepth = 0;
  /** Changes of the open batch: what the journal records, and how to take each back if it cannot be saved. */
  #ops: JournalOp[] = [];
  #undo: Array<() => void> = [];
  /** Id of the snapshot on disk (undefined: none written or loaded yet), and the journal's length after it. */
  #snapshotId: string | undefined;
  #snapshotBytes = 0;
  #journalBytes = 0;

  constructor(options: StoreOptions = {}) {
    this.dataFile = options.dataFile;
    if (this.dataFile) {
      removeStaleTempFiles(this.dataFile);
      this.#load(this.dataFile);
    }
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
    return [...(this.#chatIdsOf.get(account) ?? [])]
      .map((id) => this.#chats.get(id)!)
      .sort((a, b) => b.seq - a.seq);
  }

  /** Inserts or replaces a chat record. */
  saveChat(chat: StoredChat): void {
    this.batch(() => {
      const before = this.#chats.get(chat.id);
      this.#putChat(chat);
      this.#record({ t: "chat", chat }, () => {
        if (before) this.#chats.set(chat.id, before);
        else {
          this.#chats.delete(chat.id);
          this.#chatIdsOf.get(chat.account)?.delete(chat.id);
        }
      });
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
      this.#record({ t: "message", chatId, message }, () => {
        list.pop();
        if (list.length === 0) this.#messages.delete(chatId);
      });
    });
  }

  apiKeys(): readonly ApiKey[] {
    return this.#apiKeys;
  }

  addApiKey(apiKey: ApiKey): void {
    this.batch(() => {
      this.#apiKeys.push(apiKey);
      this.#record({ t: "apiKey", apiKey }, () => this.#apiKeys.pop());
    });
  }

  isSsoVerified(subject: string): boolean {
    return this.#ssoVerified.has(subject);
  }

  markSsoVerified(subject: string): void {
    this.batch(() => {
      if (this.#ssoVerified.has(subject)) return;
      this.#ssoVerified.add(subject);
      this.#record({ t: "sso", subject }, () => this.#ssoVerified.delete(subject));
    });
  }

  /**
   * A named key/value section persisted with the rest, for parts that keep their own records
   * (the OAuth server's clients, grants and tokens). Values must survive `JSON.stringify`.
   */
  collection<T>(name: string): StoreCollection<T> {
    const map = this.#collectionMap(name) as Map<string, T>;
    return {
      get: (key) => map.get(key),
      has: (key) => map.has(key),
      set: (key, value) => {
        this.batch(() => {
          const had = map.has(key);
          const before = map.get(key);
          map.set(key, value);
          this.#record({ t: "set", collection: name, key, value }, () =>
            had ? map.set(key, before as T) : map.delete(key),
          );
        });
      },
      delete: (key) =>
        this.batch(() => {
          if (!map.has(key)) return false;
          const before = map.get(key) as T;
          map.delete(key);
          this.#record({ t: "delete", collection: name, key }, () => map.set(key, before));
          return true;
        }),
      entries: () => [...map.entries()],
      values: () => [...map.values()],
      size: () => map.size,
    };
  }

  /**
   * Runs `change` and persists once at the end, so related changes land in the file together (one journal
   * line). When the file cannot be written, memory is rolled back and `DataFileWriteError` is thrown.
   */
  batch<T>(change: () => T): T {
    this.#batchDepth += 1;
    try {
      return change();
    } finally {
      this.#batchDepth -= 1;
      if (this.#batchDepth === 0) this.#endBatch();
    }
  }

  /** Folds the journal into the data file (on close, so a stopped server leaves one file). Never throws. */
  compact(): void {
    if (!this.dataFile || (this.#snapshotId !== undefined && this.#journalBytes === 0)) return;
    try {
      this.#writeSnapshot(this.dataFile);
    } catch (error) {
      console.error(
        `reference server: cannot write the data file ${this.dataFile}: ${(error as Error).message}; the journal keeps the changes`,
      );
    }
  }

  #putChat(chat: StoredChat): void {
    this.#chats.set(chat.id, chat);
    let ids = this.#chatIdsOf.get(chat.account);
    if (!ids) {
      ids = new Set();
      this.#chatIdsOf.set(chat.account, ids);
    }
    ids.add(chat.id);
  }

  #collectionMap(name: string): Map<string, unknown> {
    let entries = this.#collections.get(name);
    if (!entries) {
      entries = new Map();
      this.#collections.set(name, entries);
    }
    return entries;
  }

  #record(op: JournalOp, undo: () => void): void {
    this.#ops.push(op);
    this.#undo.push(undo);
  }

  /** Persists what the batch changed (also when it threw half-way, as each change is kept in memory). */
  #endBatch(): void {
    const ops = this.#ops;
    const undo = this.#undo;
    this.#ops = [];
    this.#undo = [];
    if (!this.dataFile || ops.length === 0) return;
    try {
      this.#persist(this.dataFile, { seq: this.#seq, ops });
    } catch (error) {
      console.error(
        `reference server: cannot write the data file ${this.dataFile}: ${(error as Error).message}; change rolled back`,
      );
      for (const step of undo.reverse()) step();
      throw new DataFileWriteError(this.dataFile, error);
    }
    if (this.#journalBytes > Math.max(JOURNAL_FOLD_FLOOR_BYTES, this.#snapshotBytes)) this.compact();
  }

  /** Appends the batch to the journal; writes a whole snapshot when there is none (or the files were lost). */
  #persist(file: string, batch: JournalBatch): void {
    const appended =
      this.#snapshotId !== undefined && existsSync(file)
        ? appendJournal(file, this.#snapshotId, this.#journalBytes, batch)
        : null;
    if (appended === null) this.#writeSnapshot(file);
    else this.#journalBytes = appended;
  }

  #writeSnapshot(file: string): void {
    const id = randomUUID();
    const contents = `${JSON.stringify({ ...this.#snapshot(), journal: id })}\n`;
    writeFileAtomic(file, contents);
    this.#snapshotId = id;
    this.#snapshotBytes = Buffer.byteLength(contents);
    this.#journalBytes = 0;
    removeJournal(file);
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

  /** Redoes one journalled change on load. */
  #apply(op: JournalOp): void {
    switch (op.t) {
      case "chat": {
        this.#putChat(StoredChatSchema.parse(op.chat));
        break;
      }
      case "message": {
        const list = this.#messages.get(op.chatId) ?? [];
        list.push(op.message);
        this.#messages.set(op.chatId, list);
        break;
      }
      case "apiKey":
        this.#apiKeys.push(ApiKeySchema.parse(op.apiKey));
        break;
      case "sso":
        this.#ssoVerified.add(op.subject);
        break;
      case "set":
        this.#collectionMap(op.collection).set(op.key, op.value);
        break;
      case "delete":
        this.#collectionMap(op.collection).delete(op.key);
        break;
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
    this.#seq = data.seq;
    for (const chat of data.chats) this.#putChat(chat);
    this.#messages = new Map(Object.entries(data.messages));
    this.#apiKeys = data.apiKeys;
    this.#ssoVerified = new Set(data.ssoVerified);
    this.#collections = new Map(
      Object.entries(data.collections).map(([name, entries]) => [name, new Map(Object.entries(entries))]),
    );
    this.#snapshotId = data.journal;
    this.#snapshotBytes = Buffer.byteLength(text);
    let batches: JournalBatch[];
    try {
      batches = readJournal(file, data.journal);
    } catch (error) {
      throw new Error(`Data file ${file} has a damaged journal: ${(error as Error).message}`);
    }
    for (const batch of batches) {
      for (const op of batch.ops) this.#apply(op);
      this.#seq = Math.max(this.#seq, batch.seq);
    }
    // One file again after a restart: the journal (or one left by an older snapshot) is folded in.
    if (existsSync(journalFileOf(file))) this.#writeSnapshot(file);
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
