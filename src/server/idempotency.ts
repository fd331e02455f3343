/** `Idempotency-Key` on the POSTs of /v2: per account, kept 24 hours, a repeat answered with the first answer. */
import { createHash } from "node:crypto";
import * as z from "zod";
import { ServiceError } from "./service-error.js";
import type { StoreCollection } from "./store.js";

/** The store collection that keeps finished answers. */
export const IDEMPOTENCY_COLLECTION = "idempotency-keys";
/** How long a key is remembered (the contract's 24 hours). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** Keys one account may hold at once; past it new keyed requests are refused (429), never an old key dropped. */
export const IDEMPOTENCY_KEYS_PER_ACCOUNT = 10_000;
/**
 * How long a repeat waits for the first request with its key to finish (the assistant may be slow). Past it the
 * repeat is answered 409 `idempotency_key_in_progress` with `Retry-After`, which ChatClient retries.
 */
export const IDEMPOTENCY_WAIT_MS = 30_000;
/** A key is 1 to 255 printable ASCII characters (a UUID is the usual choice). */
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

/** What is kept of a finished request: enough to answer a repeat exactly as the first was answered. */
const KeptAnswerSchema = z.object({
  account: z.string(),
  fingerprint: z.string(),
  at: z.number(),
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.unknown(),
});
type KeptAnswer = z.infer<typeof KeptAnswerSchema>;

export interface IdempotentAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

interface Running {
  fingerprint: string;
  answer: Promise<IdempotentAnswer>;
}

/**
 * The keys of every account. Finished answers live in a store collection (persisted with `dataFile`); requests
 * still running only in memory, so a repeat that arrives meanwhile waits for the first (bounded) instead of
 * running again. Answers with a 5xx are not kept: the service changed nothing, so a repeat runs again.
 */
export class IdempotencyKeys {
  readonly #kept: StoreCollection<unknown>;
  readonly #running = new Map<string, Running>();
  readonly #now: () => number;
  readonly #waitMs: number;
  readonly #perAccount: number;

  constructor(
    kept: StoreCollection<unknown>,
    options: { now?: () => number; waitMs?: number; perAccount?: number } = {},
  ) {
    this.#kept = kept;
    this.#now = options.now ?? Date.now;
    this.#waitMs = options.waitMs ?? IDEMPOTENCY_WAIT_MS;
    this.#perAccount = options.perAccount ?? IDEMPOTENCY_KEYS_PER_ACCOUNT;
  }

  /**
   * Runs `handle` once per (account, key): a repeat with the same request gets the first answer (waiting while
   * the first still runs); the key with another request is refused with 409 `idempotency_key_reused`.
   */
  async run(
    account: string,
    key: string,
    request: { method: string; path: string; body: string | undefined },
    handle: () => Promise<IdempotentAnswer>,
  ): Promise<IdempotentAnswer> {
    if (!KEY_SHAPE.test(key))
      throw new ServiceError(
        "bad_request",
        "Idempotency-Key must be 1 to 255 printable ASCII characters (a UUID, say).",
      );
    const id = `${account}\u0000${key}`;
    const fingerprint = fingerprintOf(request);
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
    this.#makeRoom(account);
    const answer = handle();
    this.#running.set(id, { fingerprint, answer });
    try {
      const done = await answer;
      if (done.status < 500) {
        const record: KeptAnswer = { account, fingerprint, at: this.#now(), ...done };
        this.#kept.set(id, record);
      }
      return done;
    } finally {
      this.#running.delete(id);
    }
  }

  async #awaitFirst(running: Running): Promise<IdempotentAnswer> {
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
    this.#kept.delete(id);
    return undefined;
  }

  /** Forgets the account's expired keys when it is at its cap; refuses the request when every key is still live. */
  #makeRoom(account: string): void {
    let count = 0;
    for (const [id, value] of this.#kept.entries())
      if (id.startsWith(`${account}\u0000`) && value) count += 1;
    for (const id of this.#running.keys()) if (id.startsWith(`${account}\u0000`)) count += 1;
    if (count < this.#perAccount) return;
    const now = this.#now();
    let oldest = Number.POSITIVE_INFINITY;
    for (const [id, value] of this.#kept.entries()) {
      if (!id.startsWith(`${account}\u0000`)) continue;
      const at = KeptAnswerSchema.safeParse(value).data?.at ?? 0;
      if (now - at >= IDEMPOTENCY_KEY_TTL_MS) {
        this.#kept.delete(id);
        count -= 1;
      } else oldest = Math.min(oldest, at);
    }
    if (count < this.#perAccount) return;
    const seconds = Number.isFinite(oldest) ? Math.ceil((oldest + IDEMPOTENCY_KEY_TTL_MS - now) / 1000) : 1;
    throw new ServiceError(
      "rate_limited",
      `This account holds ${this.#perAccount} idempotency keys from the last 24 hours; none is dropped ` +
        "before it expires, so new keyed requests wait.",
      { retryAfter: Math.max(1, seconds) },
    );
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
