/** `--confirm-tool <pattern>`: a matching `tools/call` goes upstream only after the person approves it in the client's own dialog. */
import { createHash, randomBytes } from "node:crypto";
import * as z from "zod";
import type { BridgeLog } from "../log/log.js";
import { confirmForm, shown } from "./confirm-form.js";
import { type StepOutcome, type ToolCallContext, type ToolCallStep, toolErrorResult } from "./index.js";
import { wildcardRegex } from "./tool-filter.js";

/** The key of the bridge's one elicitation in `inputRequests` / `inputResponses`. */
export const CONFIRM_INPUT_KEY = "chat-mcp-bridge/confirm";
/** Every `requestState` the bridge issues starts so; an upstream server's state never does. */
export const CONFIRM_STATE_PREFIX = "chat-mcp-bridge.confirm.";
/** How long the person has to answer (the dialog may wait while they read). */
export const DEFAULT_CONFIRM_TTL_MS = 10 * 60_000;
/** Confirmations waiting at once (and rounds of approved calls open at once); past it, the oldest is forgotten. */
export const DEFAULT_MAX_PENDING = 32;

export interface ConfirmToolStepOptions {
  /** `--confirm-tool` patterns, with the `--ignore-tool` wildcard rules. */
  patterns: readonly string[];
  /** Each decision is recorded here (tool and decision, never argument values). */
  log: Pick<BridgeLog, "info">;
  now?: () => number;
  ttlMs?: number;
  maxPending?: number;
}

/** A confirmation asked and not yet answered: the call exactly as it came, to be sent unchanged once approved. */
interface PendingConfirmation {
  params: ToolCallContext["params"];
  /** The tool and its arguments in a canonical form: the retry must carry the very call the person saw. */
  fingerprint: string;
  expiresAt: number;
}

/** A round of input the server opened on an approved call: open until `expiresAt`, for `left` retries (usually one). */
interface OpenRound {
  expiresAt: number;
  left: number;
}

/**
 * A round is the approved call (its fingerprint) with the server's exact `requestState` (or none), kept as a
 * digest: a server's state may be megabytes, and only equality is asked of it.
 */
function roundKey(fingerprint: string, requestState: unknown): string {
  const state = typeof requestState === "string" ? requestState : null;
  return createHash("sha256")
    .update(JSON.stringify([fingerprint, state]))
    .digest("base64url");
}

/** An elicitation answer as a client sends it back (`ElicitResult`); anything else counts as no approval. */
/** Answers other than accept, as the spec names them (and a client's "deny"); anything else is logged as unreadable. */
const KNOWN_REFUSALS = new Set(["decline", "cancel", "deny"]);

const ConfirmAnswerSchema = z.looseObject({
  action: z.string(),
  content: z.record(z.string(), z.unknown()).nullish(),
});

/** The step: calls of tools no pattern matches pass untouched; matching ones are asked about first. */
export function createConfirmToolStep(options: ConfirmToolStepOptions): ToolCallStep {
  const patterns = options.patterns.map((pattern) => ({ pattern, regex: wildcardRegex(pattern) }));
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? DEFAULT_CONFIRM_TTL_MS;
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  const pending = new Map<string, PendingConfirmation>();
  /**
   * The rounds the server opened on approved calls: its `input_required` answer to one names a `requestState` (or
   * none), and only the retry of that very call with that very state continues it without a question, once.
   */
  const rounds = new Map<string, OpenRound>();
  const record = (tool: string, decision: string) => options.log.info(`--confirm-tool: ${tool}: ${decision}`);

  const forget = (time: number) => {
    for (const [state, entry] of pending) if (entry.expiresAt <= time) pending.delete(state);
    for (const [key, round] of rounds) if (round.expiresAt <= time) rounds.delete(key);
  };

  /** What follows an approved call once sent: an `input_required` answer of the server opens one round of it. */
  const followRounds =
    (fingerprint: string) =>
    (result: Record<string, unknown>): void => {
      if (result.resultType !== "input_required") return;
      const time = now();
      forget(time);
      const key = roundKey(fingerprint, result.requestState);
      const open = rounds.get(key);
      rounds.delete(key);
      while (rounds.size >= maxPending) rounds.delete(rounds.keys().next().value as string);
      rounds.set(key, { expiresAt: time + ttlMs, left: (open?.left ?? 0) + 1 });
    };

  /** The retry of a round the server opened on an approved call: true (and the round closed) when it is one. */
  const takeRound = (params: ToolCallContext["params"]): boolean => {
    // A round without a state is retried with its answers; a fresh call carries none.
    if (params.requestState === undefined && params.inputResponses === undefined) return false;
    forget(now());
    const key = roundKey(fingerprintOf(params), params.requestState);
    const round = rounds.get(key);
    if (!round) return false;
    if (--round.left <= 0) rounds.delete(key);
    return true;
  };

  /** Asks about `params` (the call as the client first made it), or refuses when the client cannot ask. */
  const ask = (
    params: ToolCallContext["params"],
    client: ToolCallContext["client"],
    flag: string,
  ): StepOutcome => {
    const name = shown(params.name);
    if (!canElicitForm(client.capabilities)) {
      record(name, "refused (the client cannot ask: no elicitation capability)");
      return toolError(
        `chat-mcp-bridge: the tool "${name}" needs the person's approval (--confirm-tool ${JSON.stringify(shown(flag))}), ` +
          "but this client did not declare the elicitation capability, so it cannot ask; the call was not sent to the server",
      );
    }
    const time = now();
    forget(time);
    while (pending.size >= maxPending) pending.delete(pending.keys().next().value as string);
    const state = `${CONFIRM_STATE_PREFIX}${randomBytes(18).toString("base64url")}`;
    pending.set(state, { params, fingerprint: fingerprintOf(params), expiresAt: time + ttlMs });
    record(name, "asked the person");
    return {
      kind: "input_required",
      result: {
        resultType: "input_required",
        inputRequests: {
          [CONFIRM_INPUT_KEY]: {
            method: "elicitation/create",
            params: confirmForm(params.name, params.arguments),
          },
        },
        requestState: state,
      },
    };
  };

  const settle = (call: ToolCallContext, state: string, flag: string): StepOutcome => {
    const name = shown(call.params.name);
    forget(now());
    const entry = pending.get(state);
    pending.delete(state);
    if (!entry) {
      record(name, "refused (unknown or expired confirmation)");
      return toolError(
        `chat-mcp-bridge: the confirmation of "${name}" is unknown or has expired (it lasts ${Math.round(ttlMs / 60_000)} min and is used once); ` +
          "the call was not sent to the server. Call the tool again to be asked anew",
      );
    }
    if (fingerprintOf(call.params) !== entry.fingerprint) {
      record(name, "refused (the retry differs from the call the person was asked about)");
      return toolError(
        `chat-mcp-bridge: the retried call of "${name}" is not the call the person was asked about; it was not sent to the server`,
      );
    }
    const response = call.params.inputResponses?.[CONFIRM_INPUT_KEY];
    // MRTR: a retry without the requested answer is asked again, not failed.
    if (response === undefined) return ask(entry.params, call.client, flag);
    const answer = ConfirmAnswerSchema.safeParse(response);
    if (answer.success && answer.data.action === "accept" && answer.data.content?.approve === true) {
      record(name, "approved by the person");
      // The call as first made (with any upstream server's own inputResponses/requestState), never the bridge's.
      const params = call.params._meta ? { ...entry.params, _meta: call.params._meta } : entry.params;
      return { kind: "forward", params, onResult: followRounds(entry.fingerprint) };
    }
    const action = answer.success ? answer.data.action : undefined;
    const how =
      action === "accept"
        ? "accepted without approve"
        : KNOWN_REFUSALS.has(action ?? "")
          ? action
          : "an unreadable answer";
    record(name, `denied (${how})`);
    return toolError(
      `chat-mcp-bridge: the call of "${name}" was denied by the user; it was not sent to the server`,
    );
  };

  return (call: ToolCallContext) => {
    const { name, requestState } = call.params;
    const matched = patterns.find(({ regex }) => regex.test(name));
    if (!matched) return { kind: "forward", params: call.params };
    if (call.notification === true) {
      record(shown(name), "dropped (sent as a notification, which cannot be confirmed)");
      return { kind: "drop" };
    }
    if (typeof requestState === "string" && requestState.startsWith(CONFIRM_STATE_PREFIX))
      return settle(call, requestState, matched.pattern);
    if (takeRound(call.params)) {
      record(shown(name), "continued (approved earlier; the server asked for more input)");
      return { kind: "forward", params: call.params, onResult: followRounds(fingerprintOf(call.params)) };
    }
    return ask(call.params, call.client, matched.pattern);
  };
}

/**
 * Which of `toolNames` (as the client sees them, after `--ignore-tool`/`--read-only`) the patterns put behind a
 * confirmation, for doctor (a pattern that matches none is judged in tool-rules-audit.ts, with the other rules).
 */
export function toolsToConfirm(patterns: readonly string[], toolNames: readonly string[]): string[] {
  const compiled = patterns.map((pattern) => wildcardRegex(pattern));
  return toolNames.filter((name) => compiled.some((regex) => regex.test(name)));
}

/** Form-mode elicitation: declared as `elicitation: {}` (form implied) or with `form`. */
function canElicitForm(capabilities: ToolCallContext["client"]["capabilities"] | undefined): boolean {
  const elicitation: unknown = capabilities?.elicitation;
  if (elicitation === null || typeof elicitation !== "object") return false;
  const modes = elicitation as { form?: unknown; url?: unknown };
  return modes.form !== undefined || modes.url === undefined;
}

/** The tool and its arguments with keys sorted, so a retry's key order does not matter. */
function fingerprintOf(params: ToolCallContext["params"]): string {
  return JSON.stringify([params.name, params.arguments ?? {}], (_key, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

/** A tool error answered by the bridge (`runToolCallSteps` adds `resultType` for a modern client). */
function toolError(text: string): StepOutcome {
  return { kind: "answer", result: toolErrorResult(text) };
}
