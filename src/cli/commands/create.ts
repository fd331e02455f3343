/** `chat-cli create <prompt...> [--title]`: start a chat; the assistant has answered when it returns. */
import { type CliContext, openClient } from "../context.js";
import { type CommandInput, defineCommand, valueFlag } from "../define-command.js";
import { printChat, printJson, printNextStep } from "../output.js";
import { waitForAssistant } from "../waiting.js";

const createArguments = { prompt: { name: "<prompt...>", description: "the first message" } };
const createFlags = {
  title: valueFlag("--title <title>", "chat title (default: the start of the prompt)"),
};
export type CreateOptions = CommandInput<typeof createArguments, typeof createFlags>;

export async function create(options: CreateOptions, ctx: CliContext): Promise<void> {
  const client = await openClient(ctx);
  const chat = await waitForAssistant(
    ctx,
    { label: "Waiting for the assistant…", checkCommand: "chat-cli list --limit 1" },
    () => client.createChat({ message: options.prompt, ...(options.title ? { title: options.title } : {}) }),
  );
  if (ctx.globals.json) return printJson(ctx.io, chat);
  const pending = await client.getPendingTask(chat.id);
  printChat(ctx.io, chat, pending);
  printNextStep(ctx.io, chat, pending);
}

export const createCommand = defineCommand({ arguments: createArguments, options: createFlags, run: create });
