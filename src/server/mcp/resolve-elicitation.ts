/** `resolve_task` without `task`: asks the person through elicitation (MRTR `input_required`, or the SDK's legacy shim) and builds the task from the answer. */
import {
  acceptedContent,
  type ClientCapabilities,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type ServerContext,
} from "@modelcontextprotocol/server";
import * as z from "zod";
import {
  approvedPermissionsFor,
  confirmedStepsFor,
  type Message,
  type PendingTask,
  pendingTaskOf,
  rejectedStepsFor,
} from "../../wire/index.js";
import { type AssistantWatch, type ChatService, type Principal, ServiceError } from "../context.js";
import type { ClaimedState, RequestStates } from "./request-state.js";

/** What the server remembers between the question and the answer, sealed in `requestState` (see request-state.ts). */
export interface ResolveState {
  chatId: string;
  /** The blocked assistant message the question was about: an answer to an older question is refused. */
  messageId: string;
  kind: PendingTask["kind"];
}

/** The answer form: one boolean, so every client can render it. */
const DecisionSchema = z.object({
  approve: z.boolean().meta({ title: "Approve" }).describe("Yes to approve, no to refuse"),
});

const DECISION_KEY = "decision";

/** The question is asked again at most this often within one call (a client that retries without the answer). */
const MAX_QUESTION_ROUNDS = 3;

/** True when the client declared form elicitation (a bare `elicitation: {}` means form, as in 2025-06-18). */
export function canElicitForm(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation as { form?: unknown; url?: unknown } | undefined;
  if (!elicitation) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

export interface ResolveCallContext {
  service: ChatService;
  /** The question's `requestState`s (see request-state.ts). */
  states: RequestStates<ResolveState>;
  /** The caller's capabilities: the request's envelope (modern) or those declared at `initialize` (legacy). */
  clientCapabilities: ClientCapabilities | undefined;
  /** The request's progress and cancellation, for the assistant's wait once the answer resolves the task. */
  watch?: AssistantWatch | undefined;
}

/**
 * The `resolve_task` call without `task`: first round asks, the round with the answer resolves (or not). `state` is
 * the request's state, already claimed for this very call (see RequestStates.claim), so it is spent whatever happens.
 */
export async function resolveThroughElicitation(
  call: ResolveCallContext,
  principal: Principal,
  args: { chatId: string },
  state: ClaimedState<ResolveState> | undefined,
  ctx: ServerContext,
): Promise<Message | InputRequiredResult> {
  const { chatId } = args;
  const pending = await latestPending(call.service, principal, chatId);
  const answer = inputResponse(ctx.mcpReq.inputResponses, DECISION_KEY);
  if (state && answer.kind === "elicit") {
    if (state.chatId !== chatId || state.messageId !== pending.message.id || state.kind !== pending.kind) {
      throw new ServiceError(
        "conflict",
        "The chat has moved on since the user was asked; nothing was resolved.",
      );
    }
    const decision =
      answer.action === "accept"
        ? acceptedContent(ctx.mcpReq.inputResponses, DECISION_KEY, DecisionSchema)
        : undefined;
    if (!decision) {
      throw new ServiceError(
        "bad_request",
        `The user ${answer.action === "accept" ? "gave no valid answer" : `chose ${answer.action}`}; nothing was resolved and the chat still waits.`,
      );
    }
    if (pending.kind === "integration") {
      const task = decision.approve ? confirmedStepsFor(pending) : rejectedStepsFor(pending);
      return call.service.resolveTask(principal, chatId, task, call.watch);
    }
    if (!decision.approve) {
      throw new ServiceError(
        "bad_request",
        "The user did not approve running the script; nothing was resolved and the chat still waits.",
      );
    }
    return call.service.resolveTask(principal, chatId, approvedPermissionsFor(pending), call.watch);
  }
  if (!canElicitForm(call.clientCapabilities)) {
    throw new ServiceError(
      "bad_request",
      "`task` is required: this client cannot show an elicitation dialog, so the server cannot ask the user. " +
        "Ask the user yourself, then pass `task` (see list_messages for what the chat waits for).",
    );
  }
  const round = (state?.round ?? 0) + 1;
  if (round > MAX_QUESTION_ROUNDS) {
    throw new ServiceError(
      "bad_request",
      `The user was asked ${MAX_QUESTION_ROUNDS} times without an answer coming back; nothing was resolved.`,
    );
  }
  return inputRequired({
    inputRequests: {
      [DECISION_KEY]: inputRequired.elicit({
        message: questionFor(pending),
        requestedSchema: DecisionSchema,
      }),
    },
    requestState: await call.states.mint(
      { chatId, messageId: pending.message.id, kind: pending.kind },
      { tool: "resolve_task", args, round },
      ctx,
    ),
  });
}

async function latestPending(
  service: ChatService,
  principal: Principal,
  chatId: string,
): Promise<PendingTask> {
  const page = await service.listMessages(principal, chatId, { limit: 20 });
  const pending = pendingTaskOf(page.data.find((message) => message.role === "assistant"));
  if (!pending) {
    throw new ServiceError("conflict", "The chat is not waiting for anything; there is nothing to resolve.");
  }
  return pending;
}

/** The question shown to the person: what exactly is asked, names and script paths included. */
function questionFor(pending: PendingTask): string {
  if (pending.kind === "integration") {
    const asked = [
      ...(pending.integrations.length > 0 ? [`the integrations ${pending.integrations.join(", ")}`] : []),
      ...(pending.mcpPresets.length > 0 ? [`the MCP presets ${pending.mcpPresets.join(", ")}`] : []),
    ];
    return `The assistant asks to connect ${asked.join(" and ")}. Approve to confirm them, or refuse to go on without them.`;
  }
  const scripts = pending.permissions.map(
    (permission) => permission.input.executeScript ?? permission.toolName,
  );
  return `The assistant asks permission to run ${scripts.join(", ")}. Approve to let it run?`;
}
