/** The reference server's state: in memory, optionally persisted to a JSON data file plus an append-only journal beside it. */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import * as z from "zod";
import { isProcessAlive, writeFileAtomic } from "../internal/files.js";
import { type Message, MessageSchema } from "../wire/index.js";
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

/** One change as the journal records it; replaying the ops of a batch in order redoes the batch. */
const JournalOpSchema = z.discriminatedUnion("t", [
  z.object({ t: z.literal("chat"), chat: z.record(z.string(), z.unknown()) }),
  z.object({ t: z.literal("message"), chatId: z.string(), message: MessageSchema }),
  z.object({ t: z.literal("apiKey"), apiKey: z.record(z.string(), z.unknown()) }),
  z.object({ t: z.literal("sso"), subject: z.string() }),
  z.object({ t: z.literal("set"), collection: z.string(), key: z.string(), value: z.unknown() }),
  z.object({ t: z.literal("delete"), collection: z.string(), key: z.string() }),
]);
type JournalOp = z.infer<typeof JournalOpSchema>;
/** One line of the journal: the store-wide sequence after the batch, and its ops. */
const JournalBatchSchema = z.object({ seq: z.number().int(), ops: z.array(JournalOpSchema) });
type JournalBatch = z.infer<typeof JournalBatchSchema>;
/** The journal's first line: the snapshot it continues (a journal left by an older snapshot is ignored). */
const JournalHeaderSchema = z.object({ snapshot: z.string() });
const journalFileOf = (dataFile: string): string => `${dataFile}.journal`;

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
    rmSync(journalFileOf(file), { force: true });
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

/**
 * The batches recorded after the snapshot `snapshotId`; a torn last line (a crash mid-append) is dropped, any
 * other damage throws. A journal of another snapshot (left by a crash during folding) yields nothing.
 */
function readJournal(dataFile: string, snapshotId: string | undefined): JournalBatch[] {
  let text: string;
  try {
    text = readFileSync(journalFileOf(dataFile), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  // The last piece is empty after a final newline, or a torn line: dropped either way.
  const [headerLine, ...batchLines] = text.split("\n").slice(0, -1);
  if (headerLine === undefined) return [];
  if (JournalHeaderSchema.safeParse(parseJson(headerLine)).data?.snapshot !== snapshotId) return [];
  return batchLines.map((line, index) => {
    const batch = JournalBatchSchema.safeParse(parseJson(line));
    if (!batch.success) throw new Error(`journal line ${index + 2} is damaged: ${batch.error.message}`);
    return batch.data;
  });
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * Appends one batch (after the header when the journal is new) and fsyncs. Returns the journal's new length, or
 * null when the journal on disk is not the one expected (`expectedBytes` differs: deleted, replaced), so the caller
 * writes a whole snapshot instead. A failed append is cut back off, leaving the journal as it was.
 */
function appendJournal(dataFile: string, snapshotId: string, expectedBytes: number, batch: JournalBatch) {
  const fd = openSync(journalFileOf(dataFile), "a", 0o600);
  try {
    const size = fstatSync(fd).size;
    if (size !== expectedBytes) return null;
    const header = size === 0 ? `${JSON.stringify({ snapshot: snapshotId })}\n` : "";
    const bytes = Buffer.from(`${header}${JSON.stringify(batch)}\n`, "utf8");
    try {
      writeFileSync(fd, bytes);
      fsyncSync(fd);
    } catch (error) {
      try {
        ftruncateSync(fd, size);
      } catch {
        // The torn line is dropped on the next load anyway.
      }
      throw error;
    }
    return size + bytes.length;
  } finally {
    closeSync(fd);
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
