/** The `requestState` of a tool's question: sealed (HMAC, expiry, caller), bound to one tool call and round, spent on first use. */
import { createHash, randomBytes } from "node:crypto";
import {
  createRequestStateCodec,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { type Principal, ServiceError } from "../context.js";

/** How long the person has to answer before the question must be asked again. */
export const REQUEST_STATE_TTL_SECONDS = 600;
/**
 * Spent states remembered at once. Each is kept until it would have expired anyway; when this many unexpired ones
 * are held, answers are refused for a while rather than one forgotten early (which would let it be replayed).
 */
export const MAX_SPENT_REQUEST_STATES = 10_000;

/** The tool call a state was issued for: what it may answer, and nothing else. */
interface CallBinding {
  tool: string;
  /** SHA-256 of the call's arguments as canonical JSON (keys sorted), base64url. */
  argumentsHash: string;
  /** The round of the call this state was issued in (1 for the first question). */
  round: number;
  /** Random: names this state in the memory of spent ones. */
  nonce: string;
}

type Sealed<T> = T & { call: CallBinding };

/** A verified, unspent state of this very call: the tool's payload and the round it was issued in. */
export type ClaimedState<T> = T & { round: number };

export interface ToolCall {
  tool: string;
  args: unknown;
}

export interface RequestStates<T extends object> {
  /** For `McpServer`'s `requestState.verify`: integrity, expiry and caller (account and grant), before any tool runs. */
  verify: RequestStateCodec<Sealed<T>>["verify"];
  /** A state for the next round of `call` (issued in `round`). */
  mint(payload: T, call: ToolCall & { round: number }, ctx: ServerContext): Promise<string>;
  /**
   * The state the request carries, when it was issued for exactly this tool and these arguments and not used
   * before; it is spent by this call. Undefined without a state; a `ServiceError` for any other state.
   */
  claim(call: ToolCall, ctx: ServerContext): ClaimedState<T> | undefined;
}

/**
 * Request states sealed with the per-server `secret` (at least 32 bytes): HMAC-SHA256, valid for
 * `REQUEST_STATE_TTL_SECONDS`, bound to the account and grant of the caller; the tool call and round are in the
 * sealed payload, checked by `claim` (the SDK's verify hook sees the caller but not the call's name or arguments).
 */
export function createRequestStates<T extends object>(
  secret: Uint8Array,
  spent = new SpentRequestStates(),
): RequestStates<T> {
  const codec = createRequestStateCodec<Sealed<T>>({
    key: secret,
    ttlSeconds: REQUEST_STATE_TTL_SECONDS,
    bind: (ctx) => {
      const principal = ctx.http?.authInfo?.extra?.principal as Principal | undefined;
      return `${ctx.mcpReq.method}\u0000${principal?.account ?? ""}\u0000${principal?.subject ?? ""}`;
    },
  });
  return {
    verify: codec.verify,
    mint: (payload, call, ctx) =>
      codec.mint(
        {
          ...payload,
          call: {
            tool: call.tool,
            argumentsHash: argumentsHash(call.args),
            round: call.round,
            nonce: randomBytes(16).toString("base64url"),
          },
        },
        ctx,
      ),
    claim: (call, ctx) => {
      const state = ctx.mcpReq.requestState<Sealed<T> | string>();
      if (state === undefined) return undefined;
      if (typeof state !== "object" || state === null || typeof state.call?.nonce !== "string") {
        throw new ServiceError("bad_request", "The requestState is not one this server issued.");
      }
      if (state.call.tool !== call.tool || state.call.argumentsHash !== argumentsHash(call.args)) {
        const other =
          state.call.tool !== call.tool
            ? `${state.call.tool}, not ${call.tool}`
            : "the same tool with other arguments";
        throw new ServiceError(
          "bad_request",
          `The requestState was issued for another tool call (${other}); send it only with the call that received ` +
            "it, unchanged.",
        );
      }
      const outcome = spent.spend(state.call.nonce);
      if (outcome === "already-spent") {
        throw new ServiceError(
          "bad_request",
          "This requestState has already been used: each answer counts once, and nothing was resolved. " +
            "Call the tool again without it to ask the user again.",
        );
      }
      if (outcome === "full") {
        throw new ServiceError("rate_limited", "Too many questions were answered in the last minutes.", {
          retryAfter: Math.ceil(spent.retryAfterMs() / 1000),
        });
      }
      const { call: binding, ...payload } = state;
      return { ...(payload as unknown as T), round: binding.round };
    },
  };
}

/**
 * The memory of spent states: each nonce for `ttlMs` after it was spent (no state outlives its own lifetime, so none
 * is forgotten while it could still be replayed), at most `maxEntries` at once.
 */
export class SpentRequestStates {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** nonce -> expiry (ms); insertion order is expiry order, since every entry lives `ttlMs`. */
  readonly #expiries = new Map<string, number>();

  constructor(options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {}) {
    this.#ttlMs = options.ttlMs ?? REQUEST_STATE_TTL_SECONDS * 1000;
    this.#maxEntries = options.maxEntries ?? MAX_SPENT_REQUEST_STATES;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    this.#forgetExpired();
    return this.#expiries.size;
  }

  /** Records `nonce` as spent; "full" (nothing recorded) when the memory holds no room. */
  spend(nonce: string): "spent" | "already-spent" | "full" {
    this.#forgetExpired();
    if (this.#expiries.has(nonce)) return "already-spent";
    if (this.#expiries.size >= this.#maxEntries) return "full";
    this.#expiries.set(nonce, this.#now() + this.#ttlMs);
    return "spent";
  }

  /** Until the oldest spent state expires (and makes room). */
  retryAfterMs(): number {
    const oldest = this.#expiries.values().next().value;
    return oldest === undefined ? 0 : Math.max(oldest - this.#now(), 0);
  }

  #forgetExpired(): void {
    const now = this.#now();
    for (const [nonce, expiresAt] of this.#expiries) {
      if (expiresAt > now) break;
      this.#expiries.delete(nonce);
    }
  }
}

/** SHA-256 of `args` as canonical JSON: object keys sorted at every depth, so equal arguments hash equal. */
export function argumentsHash(args: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(args ?? {}))
    .digest("base64url");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
