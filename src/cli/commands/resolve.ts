/** `chat-cli resolve <chatId>`: finish integration setup, approve script permissions, reject, or send any task. */
import { closestName } from "../../internal/closest-name.js";
import { readSmallFile } from "../../internal/files.js";
import {
  approvedPermissionsFor,
  type Chat,
  ConfirmedPermissionsTaskSchema,
  ConfirmedStepsTaskSchema,
  confirmedStepsFor,
  type PendingTask,
  pendingTaskOf,
  rejectedStepsFor,
  sameNames,
  type Task,
  TaskSchema,
} from "../../wire/index.js";
import { type CliContext, openClient, waitForAssistant } from "../context.js";
import {
  type CommandInput,
  chatIdArgument,
  defineCommand,
  fieldName,
  fieldProblem,
  parseNames,
  switchFlag,
  valueFlag,
} from "../define-command.js";
import { aboutChat, CliError, EXIT, serverMessage, statusOf, UsageError } from "../errors.js";
import { isYes } from "../io.js";
import {
  hintArgument,
  pendingSummary,
  printHint,
  printJson,
  printMessage,
  printNextStep,
  printPending,
  requestedNames,
} from "../output.js";

const resolveArguments = { chatId: chatIdArgument };
const resolveFlags = {
  integrations: valueFlag(
    "--integrations <a,b>",
    "confirm these integrations (and MCP presets) as connected; must match the request, whose presets go with it",
    parseNames,
  ),
  connected: switchFlag(
    "--connected",
    "confirm exactly the requested integrations and MCP presets as connected",
  ),
  reject: switchFlag("--reject", "reject the integration request"),
  approve: switchFlag("--approve", "approve the pending script permissions, unchanged"),
  task: valueFlag("--task <json|@file>", "send this task as is (JSON, or @path to a JSON file)"),
};
export type ResolveOptions = CommandInput<typeof resolveArguments, typeof resolveFlags>;

const CHOICES = "--integrations <a,b>, --connected, --reject, --approve or --task <json|@file>";

export async function resolve(options: ResolveOptions, ctx: CliContext): Promise<void> {
  const chosen = [
    options.integrations !== undefined,
    options.connected,
    options.reject,
    options.approve,
    options.task !== undefined,
  ].filter(Boolean).length;
  if (chosen > 1) throw new UsageError(`resolve takes one of ${CHOICES}, not several`);
  if (chosen === 0 && !ctx.io.interactive) {
    throw new UsageError(
      `resolve needs one of ${CHOICES}`,
      `See what is pending with \`chat-cli pending ${hintArgument(options.chatId)}\`.`,
    );
  }
  // A malformed --task is a usage error, reported before anything is sent.
  const givenTask = options.task !== undefined ? await parseTaskFlag(options.task) : undefined;

  const client = await openClient(ctx);
  const chat = await aboutChat(options.chatId, () => client.getChat(options.chatId));
  let task: Task;
  if (givenTask) {
    task = givenTask;
  } else {
    const pending = await client.getPendingTask(options.chatId);
    const planned =
      chosen === 0
        ? await askForTask(chat, pending, ctx)
        : taskFromFlags(chat, pending, options, (line) => printHint(ctx.io, line));
    if (!planned) return;
    task = planned;
  }

  const reply = await waitForAssistant(
    ctx,
    { label: "Resuming the chat…", checkCommand: `chat-cli pending ${hintArgument(options.chatId)}` },
    () =>
      client.resolveTask(options.chatId, task).catch(async (error: unknown) => {
        if (statusOf(error) !== 409) throw error;
        const pending = await client.getPendingTask(options.chatId).catch(() => undefined);
        throw conflictError(options.chatId, task, pending, error);
      }),
  );
  if (ctx.globals.json) return printJson(ctx.io, reply);
  const next = pendingTaskOf(reply);
  printMessage(ctx.io, reply, next);
  printNextStep(ctx.io, chat, next);
}

/** The task the flags ask for, checked against what the chat waits for before anything is sent. */
function taskFromFlags(
  chat: Chat,
  pending: PendingTask | null,
  options: ResolveOptions,
  announce: (line: string) => void,
): Task {
  if (!pending) {
    throw new CliError(`chat ${chat.id} is not waiting for anything: nothing to resolve`, EXIT.error);
  }
  if (options.approve) {
    if (pending.kind !== "permissions") throw wrongKind(chat, pending, "--approve", "permissions");
    return approvedPermissionsFor(pending);
  }
  if (options.reject) {
    if (pending.kind === "permissions") {
      throw new CliError(
        `chat ${chat.id} waits for ${pendingSummary(pending)}: a permission request is rejected by sending any follow-up message, not by resolve`,
        // Another task type than the chat waits for: a conflict, as every other wrong-kind flag.
        EXIT.conflict,
        `Reject it with: chat-cli send ${hintArgument(chat.id)} <text>`,
      );
    }
    return rejectedStepsFor(pending);
  }
  if (pending.kind !== "integration") {
    throw wrongKind(chat, pending, options.connected ? "--connected" : "--integrations", "an integration");
  }
  assertHostProject(chat);
  // --integrations takes the request's MCP preset names too: a presets-only request is confirmed by its presets.
  const given = options.connected
    ? [...pending.integrations, ...pending.mcpPresets]
    : (options.integrations ?? []);
  const presets = given.filter(
    (name) => pending.mcpPresets.includes(name) && !pending.integrations.includes(name),
  );
  const integrations = given.filter((name) => !presets.includes(name));
  if (
    !sameNames(pending.integrations, integrations) ||
    (presets.length > 0 && !sameNames(pending.mcpPresets, presets))
  ) {
    throw new CliError(
      `names do not match the request of chat ${chat.id}: it asks for ${requestedNames(pending)}, you gave ${list(given)}`,
      EXIT.error,
      `${didYouMean(given, [...pending.integrations, ...pending.mcpPresets])}Pass exactly the requested integration and MCP preset names, or use --connected.`,
    );
  }
  // The service confirms a request whole: presets left out are confirmed with the integrations, and that is said.
  const implied = presets.length === 0 && pending.mcpPresets.length > 0 && !options.connected;
  announce(
    `Confirming ${requestedNames(pending)}${implied ? " (the request's MCP presets go with it)" : ""} for chat ${chat.id}.`,
  );
  return confirmedStepsFor(pending, integrations);
}

/** "Did you mean Neon? " for each given name that is not requested but close to one that is (names are exact). */
function didYouMean(given: readonly string[], requested: readonly string[]): string {
  const suggestions = given
    .filter((name) => !requested.includes(name))
    .map((name) => closestName(name, requested))
    .filter((name): name is string => name !== undefined && !given.includes(name));
  return suggestions.length > 0 ? `Did you mean ${list([...new Set(suggestions)])}? ` : "";
}

/** Without a hosting project the integration cannot be connected, so it cannot be confirmed. */
function assertHostProject(chat: Chat): void {
  if (chat.hostProjectId) return;
  throw new CliError(
    `chat ${chat.id} has no hostProjectId: the integration flow cannot proceed`,
    EXIT.error,
    `Link a hosting project to the account or team, or reject the request with \`chat-cli resolve ${hintArgument(chat.id)} --reject\`.`,
  );
}

/** The task type that answers each kind of pause. */
const TASK_TYPE_FOR: Record<PendingTask["kind"], string> = {
  integration: "confirmed-steps",
  permissions: "confirmed-permissions",
};

/** A 409: says what the chat waits for when the task is of another type, else that the chat moved on. */
function conflictError(
  chatId: string,
  task: Task,
  pending: PendingTask | null | undefined,
  error: unknown,
): CliError {
  const see = `See what it waits for with \`chat-cli pending ${hintArgument(chatId)}\`.`;
  if (pending === null) {
    return new CliError(
      `chat ${chatId} is not waiting for any task: nothing to resolve`,
      EXIT.conflict,
      see,
      error,
    );
  }
  const expected = pending ? TASK_TYPE_FOR[pending.kind] : undefined;
  if (pending && expected && task.type !== expected) {
    // A task of a type some pause takes was likely written for an earlier pause; any other type never fits.
    const state = Object.values(TASK_TYPE_FOR).includes(task.type) ? "has moved on: it now waits" : "waits";
    return new CliError(
      `chat ${chatId} ${state} for ${pendingSummary(pending)}, answered by a "${expected}" task, not "${task.type}"; nothing was changed`,
      EXIT.conflict,
      see,
      error,
    );
  }
  return new CliError(
    `chat ${chatId} has moved on: the task does not match its latest request (${serverMessage(error)})`,
    EXIT.conflict,
    `See the latest request with \`chat-cli pending ${hintArgument(chatId)}\`.`,
    error,
  );
}

function wrongKind(chat: Chat, pending: PendingTask, flag: string, expected: string): CliError {
  const hint =
    pending.kind === "integration"
      ? `Use --connected (or --integrations) once connected, or --reject.`
      : `Use --approve, or reject it with \`chat-cli send ${hintArgument(chat.id)} <text>\`.`;
  // The chat waits for another task type: a conflict (exit 3), as the same task sent as --task would get from the service.
  return new CliError(
    `${flag} needs a pause on ${expected}, but chat ${chat.id} waits for ${pendingSummary(pending)}`,
    EXIT.conflict,
    hint,
  );
}

function list(names: readonly string[]): string {
  return names.length > 0 ? names.join(", ") : "no names";
}

/** No flag on a terminal: show what is pending and ask, default No. Returns null when nothing is to be sent. */
async function askForTask(chat: Chat, pending: PendingTask | null, ctx: CliContext): Promise<Task | null> {
  // With --json, stdout is reserved for the reply: show what is pending on stderr.
  const shown = ctx.globals.json ? { ...ctx.io, stdout: ctx.io.stderr, color: ctx.io.errColor } : ctx.io;
  printPending(shown, chat, pending);
  if (!pending) {
    printHint(ctx.io, "Nothing to resolve.");
    return null;
  }
  let task: Task;
  let effect: string;
  if (pending.kind === "permissions") {
    task = approvedPermissionsFor(pending);
    effect = `approve ${pendingSummary(pending)}`;
  } else if (chat.hostProjectId) {
    task = confirmedStepsFor(pending);
    effect = `confirm ${requestedNames(pending)} as connected to host project ${chat.hostProjectId}`;
  } else {
    task = rejectedStepsFor(pending);
    effect = "reject the integration request (the chat has no hostProjectId, so the flow cannot proceed)";
  }
  printHint(ctx.io, `Answering y will ${effect}.`);
  const answer = await ctx.io.prompt("Resolve? [y/N] ");
  if (!isYes(answer)) {
    printHint(ctx.io, "Nothing sent.");
    return null;
  }
  return task;
}

/** A task is a few hundred bytes; a file bigger than this is not one. */
export const MAX_TASK_FILE_BYTES = 1024 * 1024;

/** `--task` as inline JSON or `@file`, validated with the wire TaskSchema; any problem is a usage error (exit 2). */
export async function parseTaskFlag(value: string): Promise<Task> {
  const text = value.startsWith("@")
    ? readSmallFile(value.slice(1), {
        flag: "--task",
        maxBytes: MAX_TASK_FILE_BYTES,
        holds: "a task, a small JSON object",
      })
    : value;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the text; the file may hold anything, so only the position is said.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new UsageError(`--task is not valid JSON${position ? ` (at position ${position})` : ""}`);
  }
  if (!json || typeof json !== "object" || Array.isArray(json)) {
    throw new UsageError('--task must be a JSON object with a "type" field', TASK_EXAMPLE);
  }
  const type = (json as { type?: unknown }).type;
  if (typeof type !== "string" || type === "") {
    throw new UsageError('--task has no "type" field (a non-empty string)', TASK_EXAMPLE);
  }
  const parsed = TaskSchema.safeParse(json);
  if (!parsed.success) {
    // The union's own issue says only "Invalid input": the known type's schema names the field.
    const known = type === "confirmed-steps" ? ConfirmedStepsTaskSchema : ConfirmedPermissionsTaskSchema;
    const issue = known.safeParse(json).error?.issues[0] ?? parsed.error.issues[0];
    throw new UsageError(
      `--task: ${fieldName(issue, "the task")} ${fieldProblem(issue, json)} (a "${type}" task)`,
      TASK_EXAMPLE,
    );
  }
  return parsed.data as Task;
}

const TASK_EXAMPLE = 'Example: --task \'{"type":"confirmed-steps","connectedIntegrationNames":["Neon"]}\'';

export const resolveCommand = defineCommand({
  arguments: resolveArguments,
  options: resolveFlags,
  run: resolve,
});
