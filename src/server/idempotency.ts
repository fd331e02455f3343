/** `Idempotency-Key` on the POSTs of /v2: per account, kept 24 hours, counted per credential, a repeat answered with the first answer. */
import { createHash } from "node:crypto";
import * as z from "zod";
import type { JsonAnswer } from "./http.js";
import { ServiceError } from "./service-error.js";
import type { StoreCollection } from "./store.js";

/** The store collection that keeps finished answers. */
export const IDEMPOTENCY_COLLECTION = "idempotency-keys";
/** How long a key is remembered (the contract's 24 hours). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** Keys one credential may hold at once; past it, only its own keys older than the window make room. */
export const IDEMPOTENCY_KEYS_PER_CREDENTIAL = 10_000;
/** How long a key is kept at the least, when its credential is at its cap: the longest a cap hit waits. */
export const IDEMPOTENCY_MIN_KEEP_MS = 60 * 60 * 1000;
/**
 * How long a repeat waits for the first request with its key to finish (the assistant may be slow). Past it the
 * repeat is answered 409 `idempotency_key_in_progress` with `Retry-After`, which ChatClient retries.
 */
export const IDEMPOTENCY_WAIT_MS = 30_000;
/** Expired keys dropped per request at most: more than one per new key, so they never pile up, and bounded. */
const EXPIRED_DROPPED_PER_REQUEST = 16;
/** A key is 1 to 255 printable ASCII characters (a UUID is the usual choice). */
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

/** What is kept of a finished request: enough to answer a repeat exactly as the first was answered. */
const KeptAnswerSchema = z.object({
  account: z.string(),
  /** The credential whose quota the key counts against (absent in files of older versions: the account's). */
  credential: z.string().optional(),
  fingerprint: z.string(),
  at: z.number(),
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.unknown(),
});
type KeptAnswer = z.infer<typeof KeptAnswerSchema>;

/** Who sent a keyed request: keys are looked up per account, and counted per credential of it. */
export interface KeyOwner {
  account: string;
  /** The credential (API key or OAuth grant) within the account; its keys count against its own cap only. */
  credential: string;
}

interface Running {
  fingerprint: string;
  answer: Promise<JsonAnswer>;
}

/** Where a kept key is indexed: when it was kept, and the credential it counts against. */
interface KeptIndex {
  at: number;
  credential: string;
}

/**
 * The keys of every account. Finished answers live in a store collection (persisted with `dataFile`); requests
 * still running only in memory, so a repeat that arrives meanwhile waits for the first (bounded) instead of
 * running again. Answers with a 5xx, or a 400 (a malformed request refused before it did anything), are not kept:
 * a repeat runs again, and the key stays free for the corrected request.
 *
 * Each request does constant work: kept keys are indexed in memory in the order they were kept (which is the order
 * they expire in), so expired ones are dropped from the front, and each credential's keys in their own index.
 */
export class IdempotencyKeys {
  readonly #kept: StoreCollection<unknown>;
  readonly #running = new Map<string, Running>();
  /** Every kept key by id, oldest first. */
  readonly #order = new Map<string, KeptIndex>();
  /** Each credential's kept keys (id -> when kept), oldest first, and its running ones. */
  readonly #byCredential = new Map<string, Map<string, number>>();
  readonly #runningBy = new Map<string, number>();
  readonly #now: () => number;
  readonly #waitMs: number;
  readonly #perCredential: number;
  readonly #windowMs: number;

  constructor(
    kept: StoreCollection<unknown>,
    options: { now?: () => number; waitMs?: number; perCredential?: number; windowMs?: number } = {},
  ) {
    this.#kept = kept;
    this.#now = options.now ?? Date.now;
    this.#waitMs = options.waitMs ?? IDEMPOTENCY_WAIT_MS;
    this.#perCredential = options.perCredential ?? IDEMPOTENCY_KEYS_PER_CREDENTIAL;
    this.#windowMs = options.windowMs ?? IDEMPOTENCY_MIN_KEEP_MS;
    // Once, at start: the kept keys of a data file are indexed in the order they were kept.
    const loaded = kept
      .entries()
      .flatMap(([id, value]) => {
        const record = KeptAnswerSchema.safeParse(value).data;
        return record ? [{ id, at: record.at, credential: record.credential ?? record.account }] : [];
      })
      .sort((a, b) => a.at - b.at);
    for (const { id, at, credential } of loaded) this.#index(id, at, credential);
  }

  /**
   * Runs `handle` once per (account, key): a repeat with the same request gets the first answer (waiting while
   * the first still runs); the key with another request is refused with 409 `idempotency_key_reused`.
   */
  async run(
    owner: KeyOwner,
    key: string,
    request: { method: string; path: string; body: string | undefined },
    handle: () => Promise<JsonAnswer>,
  ): Promise<JsonAnswer> {
    if (!KEY_SHAPE.test(key))
      throw new ServiceError(
        "bad_request",
        "Idempotency-Key must be 1 to 255 printable ASCII characters (a UUID, say).",
      );
    const id = `${owner.account}\u0000${key}`;
    const credential = `${owner.account}\u0000${owner.credential}`;
    const fingerprint = fingerprintOf(request);
    this.#dropExpired();
    const kept = this.#keptAnswer(id);
    if (kept) {
      if (kept.fingerprint !== fingerprint) throw reused();
      return {
        status: kept.status,
        headers: { ...kept.headers, "idempotent-replayed": "true" },
        body: kept.body,
      };
    }
    const running = this.#running.get(id);
    if (running) {
      if (running.fingerprint !== fingerprint) throw reused();
      return this.#awaitFirst(running);
    }
    this.#makeRoom(credential);
    const answer = handle();
    this.#running.set(id, { fingerprint, answer });
    this.#runningBy.set(credential, (this.#runningBy.get(credential) ?? 0) + 1);
    try {
      const done = await answer;
      if (done.status < 500 && done.status !== 400) {
        const record: KeptAnswer = {
          account: owner.account,
          credential,
          fingerprint,
          at: this.#now(),
          ...done,
        };
        this.#kept.set(id, record);
        this.#index(id, record.at, credential);
      }
      return done;
    } finally {
      this.#running.delete(id);
      const left = (this.#runningBy.get(credential) ?? 1) - 1;
      if (left > 0) this.#runningBy.set(credential, left);
      else this.#runningBy.delete(credential);
    }
  }

  async #awaitFirst(running: Running): Promise<JsonAnswer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = globalThis.setTimeout(resolve, this.#waitMs) as unknown as NodeJS.Timeout;
      timer.unref();
    });
    try {
      const answer = await Promise.race([running.answer, late]);
      if (answer) return { ...answer, headers: { ...answer.headers, "idempotent-replayed": "true" } };
    } finally {
      clearTimeout(timer);
    }
    throw new ServiceError(
      "idempotency_key_in_progress",
      "A request with this Idempotency-Key is still running; retry after the seconds in Retry-After to get its answer.",
      { retryAfter: 1 },
    );
  }

  #keptAnswer(id: string): KeptAnswer | undefined {
    const parsed = KeptAnswerSchema.safeParse(this.#kept.get(id));
    if (!parsed.success) return undefined;
    if (this.#now() - parsed.data.at < IDEMPOTENCY_KEY_TTL_MS) return parsed.data;
    this.#forget(id);
    return undefined;
  }

  /** Drops a few expired keys from the front of the order (the oldest kept expire first). */
  #dropExpired(): void {
    const now = this.#now();
    for (let dropped = 0; dropped < EXPIRED_DROPPED_PER_REQUEST; dropped++) {
      const oldest = this.#order.entries().next().value;
      if (!oldest || now - oldest[1].at < IDEMPOTENCY_KEY_TTL_MS) return;
      this.#forget(oldest[0]);
    }
  }

  /**
   * Room for one more key of the credential: under its cap, at once; at it, by forgetting its own oldest key once
   * that is older than the window. Otherwise refused (429) until then; another credential never pays for it.
   */
  #makeRoom(credential: string): void {
    const kept = this.#byCredential.get(credential);
    if ((kept?.size ?? 0) + (this.#runningBy.get(credential) ?? 0) < this.#perCredential) return;
    const oldest = kept?.entries().next().value;
    const now = this.#now();
    if (oldest && now - oldest[1] >= this.#windowMs) {
      this.#forget(oldest[0]);
      return;
    }
    const seconds = oldest ? Math.ceil((oldest[1] + this.#windowMs - now) / 1000) : 1;
    throw new ServiceError(
      "rate_limited",
      `This credential holds ${this.#perCredential} idempotency keys from the last ` +
        `${Math.round(this.#windowMs / 60_000)} minutes; new keyed requests wait until its oldest may go.`,
      { retryAfter: Math.max(1, seconds) },
    );
  }

  #index(id: string, at: number, credential: string): void {
    this.#order.set(id, { at, credential });
    let ofCredential = this.#byCredential.get(credential);
    if (!ofCredential) {
      ofCredential = new Map();
      this.#byCredential.set(credential, ofCredential);
    }
    ofCredential.set(id, at);
  }

  #forget(id: string): void {
    this.#kept.delete(id);
    const indexed = this.#order.get(id);
    if (!indexed) return;
    this.#order.delete(id);
    const ofCredential = this.#byCredential.get(indexed.credential);
    ofCredential?.delete(id);
    if (ofCredential?.size === 0) this.#byCredential.delete(indexed.credential);
  }
}

function reused(): ServiceError {
  return new ServiceError(
    "idempotency_key_reused",
    "This Idempotency-Key was used with another request; send a new key for a new request.",
  );
}

function fingerprintOf(request: { method: string; path: string; body: string | undefined }): string {
  return createHash("sha256")
    .update(`${request.method.toUpperCase()} ${request.path}\n${request.body ?? ""}`)
    .digest("base64url");
}
