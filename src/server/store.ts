/** The reference server's state: in memory, optionally persisted to a JSON data file that each change is appended to. */
import {
  closeSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
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

/** One change as a line of the data file records it; replaying the ops of a batch in order redoes the batch. */
const OpSchema = z.discriminatedUnion("t", [
  z.object({ t: z.literal("chat"), chat: StoredChatSchema }),
  z.object({ t: z.literal("message"), chatId: z.string(), message: MessageSchema }),
  z.object({ t: z.literal("apiKey"), apiKey: ApiKeySchema }),
  z.object({ t: z.literal("sso"), subject: z.string() }),
  z.object({ t: z.literal("set"), collection: z.string(), key: z.string(), value: z.unknown() }),
  z.object({ t: z.literal("delete"), collection: z.string(), key: z.string() }),
]);
type Op = z.infer<typeof OpSchema>;
/** A line after the snapshot: the store-wide sequence after the batch, and its ops. */
const BatchSchema = z.object({ seq: z.number().int(), ops: z.array(OpSchema) });

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

/** The data file's first line: the whole store when it was last rewritten. */
const SnapshotSchema = z.object({
  version: z.literal(1),
  seq: z.number().int(),
  chats: z.array(StoredChatSchema),
  messages: z.record(z.string(), z.array(MessageSchema)),
  apiKeys: z.array(ApiKeySchema),
  ssoVerified: z.array(z.string()),
  collections: z.record(z.string(), z.record(z.string(), z.unknown())),
});

/** The batches appended are folded into a fresh snapshot once they outgrow it (and this floor). */
const FOLD_FLOOR_BYTES = 1024 * 1024;

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
   * JSON file to load on start: a snapshot line, then one fsynced line per change. It is rewritten whole (temp file
   * + fsync + rename) when those lines outgrow the snapshot, on start and by `compact()`.
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
  /** Changes of the open batch: what the file records, and how to take each back if it cannot be saved. */
  #ops: Op[] = [];
  #undo: Array<() => void> = [];
  /** Length of the data file's snapshot line, and of the whole file as last written (0: none written yet). */
  #snapshotBytes = 0;
  #fileBytes = 0;

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
    const before = this.#chats.get(chat.id);
    this.#change({ t: "chat", chat }, () => {
      if (before) this.#chats.set(chat.id, before);
      else {
        this.#chats.delete(chat.id);
        this.#chatIdsOf.get(chat.account)?.delete(chat.id);
      }
    });
  }

  /** Messages of a chat, oldest first. */
  messagesOf(chatId: string): readonly Message[] {
    return this.#messages.get(chatId) ?? [];
  }

  appendMessage(chatId: string, message: Message): void {
    this.#change({ t: "message", chatId, message }, () => {
      const list = this.#messages.get(chatId)!;
      list.pop();
      if (list.length === 0) this.#messages.delete(chatId);
    });
  }

  apiKeys(): readonly ApiKey[] {
    return this.#apiKeys;
  }

  addApiKey(apiKey: ApiKey): void {
    this.#change({ t: "apiKey", apiKey }, () => this.#apiKeys.pop());
  }

  isSsoVerified(subject: string): boolean {
    return this.#ssoVerified.has(subject);
  }

  markSsoVerified(subject: string): void {
    if (this.#ssoVerified.has(subject)) return;
    this.#change({ t: "sso", subject }, () => this.#ssoVerified.delete(subject));
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
        const had = map.has(key);
        const before = map.get(key);
        this.#change({ t: "set", collection: name, key, value }, () =>
          had ? map.set(key, before as T) : map.delete(key),
        );
      },
      delete: (key) => {
        if (!map.has(key)) return false;
        const before = map.get(key) as T;
        this.#change({ t: "delete", collection: name, key }, () => map.set(key, before));
        return true;
      },
      entries: () => [...map.entries()],
      values: () => [...map.values()],
      size: () => map.size,
    };
  }

  /**
   * Runs `change` and persists once at the end, so related changes land in the file together (one line). When
   * the file cannot be written, memory is rolled back and `DataFileWriteError` is thrown.
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

  /** Rewrites the data file as one snapshot (on close, so a stopped server leaves one line). Never throws. */
  compact(): void {
    if (!this.dataFile || (this.#fileBytes > 0 && this.#fileBytes === this.#snapshotBytes)) return;
    try {
      this.#writeSnapshot(this.dataFile);
    } catch (error) {
      console.error(
        `reference server: cannot write the data file ${this.dataFile}: ${(error as Error).message}; its appended lines keep the changes`,
      );
    }
  }

  /** Applies one change to memory and records it (with how to take it back) in the open batch. */
  #change(op: Op, undo: () => void): void {
    this.batch(() => {
      this.#apply(op);
      this.#ops.push(op);
      this.#undo.push(undo);
    });
  }

  #collectionMap(name: string): Map<string, unknown> {
    let entries = this.#collections.get(name);
    if (!entries) {
      entries = new Map();
      this.#collections.set(name, entries);
    }
    return entries;
  }

  /** Persists what the batch changed (also when it threw half-way, as each change is kept in memory). */
  #endBatch(): void {
    const ops = this.#ops;
    const undo = this.#undo;
    this.#ops = [];
    this.#undo = [];
    if (!this.dataFile || ops.length === 0) return;
    try {
      this.#append(this.dataFile, Buffer.from(`${JSON.stringify({ seq: this.#seq, ops })}\n`, "utf8"));
    } catch (error) {
      console.error(
        `reference server: cannot write the data file ${this.dataFile}: ${(error as Error).message}; change rolled back`,
      );
      for (const step of undo.reverse()) step();
      throw new DataFileWriteError(this.dataFile, error);
    }
    if (this.#fileBytes - this.#snapshotBytes > Math.max(FOLD_FLOOR_BYTES, this.#snapshotBytes))
      this.compact();
  }

  /**
   * Appends one line and fsyncs; writes a whole snapshot instead when the file is not the one last written (none
   * yet, deleted, replaced: its length differs). A failed append is cut back off, leaving the file as it was.
   */
  #append(file: string, line: Buffer): void {
    const size = this.#fileBytes;
    if (size === 0 || statSync(file, { throwIfNoEntry: false })?.size !== size) {
      this.#writeSnapshot(file);
      return;
    }
    const fd = openSync(file, "a");
    try {
      writeFileSync(fd, line);
      fsyncSync(fd);
    } catch (error) {
      try {
        ftruncateSync(fd, size);
      } catch {
        // A torn last line is dropped on the next load anyway.
      }
      throw error;
    } finally {
      closeSync(fd);
    }
    this.#fileBytes = size + line.length;
  }

  #writeSnapshot(file: string): void {
    const snapshot: z.input<typeof SnapshotSchema> = {
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
    const contents = `${JSON.stringify(snapshot)}\n`;
    writeFileAtomic(file, contents);
    this.#snapshotBytes = this.#fileBytes = Buffer.byteLength(contents);
  }

  /** Applies one change to memory: a live change, or one redone on load. */
  #apply(op: Op): void {
    switch (op.t) {
      case "chat": {
        this.#chats.set(op.chat.id, op.chat);
        let ids = this.#chatIdsOf.get(op.chat.account);
        if (!ids) {
          ids = new Set();
          this.#chatIdsOf.set(op.chat.account, ids);
        }
        ids.add(op.chat.id);
        break;
      }
      case "message": {
        const list = this.#messages.get(op.chatId) ?? [];
        list.push(op.message);
        this.#messages.set(op.chatId, list);
        break;
      }
      case "apiKey":
        this.#apiKeys.push(op.apiKey);
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
    const [first = "", ...lines] = text.split("\n");
    const parsed = SnapshotSchema.safeParse(parseJson(first));
    if (!parsed.success) {
      throw new Error(`Data file ${file} is not a reference-server store: ${parsed.error.message}`);
    }
    const data = parsed.data;
    this.#seq = data.seq;
    for (const chat of data.chats) this.#apply({ t: "chat", chat });
    this.#messages = new Map(Object.entries(data.messages));
    this.#apiKeys = data.apiKeys;
    this.#ssoVerified = new Set(data.ssoVerified);
    this.#collections = new Map(
      Object.entries(data.collections).map(([name, entries]) => [name, new Map(Object.entries(entries))]),
    );
    // The last piece is empty after a final newline, or a torn line (a crash mid-append): dropped either way.
    for (const [index, line] of lines.slice(0, -1).entries()) {
      const batch = BatchSchema.safeParse(parseJson(line));
      if (!batch.success)
        throw new Error(`Data file ${file} line ${index + 2} is damaged: ${batch.error.message}`);
      for (const op of batch.data.ops) this.#apply(op);
      this.#seq = Math.max(this.#seq, batch.data.seq);
    }
    // One line again after a restart: the appended changes (and a torn line) are folded in.
    if (lines.length > 1 || lines[0] !== "") this.#writeSnapshot(file);
    else this.#snapshotBytes = this.#fileBytes = Buffer.byteLength(text);
  }
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
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
