/** `chat-cli create <prompt...> [--title]`: start a chat; the assistant has answered when it returns. */
import { type CliContext, openClient } from "../context.js";
import { printChat, printJson, printNextStep } from "../output.js";
import { waitForAssistant } from "../waiting.js";

export interface CreateOptions {
  prompt: string;
  title?: string;
}

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
