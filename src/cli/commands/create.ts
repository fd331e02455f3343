/** `chat-cli create <prompt...> [--title]`: start a chat; the assistant has answered when it returns. */
import { type CliContext, openClient } from "../context.js";
import { printChat, printJson, printNextStep } from "../output.js";

export interface CreateOptions {
  prompt: string;
  title?: string;
}

export async function create(options: CreateOptions, ctx: CliContext): Promise<void> {
  const client = await openClient(ctx);
  const spinner = ctx.io.spinner("Waiting for the assistant…");
  const chat = await client
    .createChat({ message: options.prompt, ...(options.title ? { title: options.title } : {}) })
    .finally(() => spinner.stop());
  if (ctx.globals.json) return printJson(ctx.io, chat);
  const pending = await client.getPendingTask(chat.id);
  printChat(ctx.io, chat, pending);
  printNextStep(ctx.io, chat, pending);
}
