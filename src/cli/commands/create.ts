/** `chat-cli create <prompt...> [--title]`: start a chat; the assistant has answered when it returns. */
import { openClient, waitForAssistant } from "../context.js";
import { defineCommand, valueFlag } from "../define-command.js";
import { printChat, printJson, printNextStep } from "../output.js";

export const createCommand = defineCommand({
  arguments: { prompt: { name: "<prompt...>", description: "the first message" } },
  options: { title: valueFlag("--title <title>", "chat title (default: the start of the prompt)") },
  async run(options, ctx) {
    const client = await openClient(ctx);
    const chat = await waitForAssistant(
      ctx,
      { label: "Waiting for the assistant…", checkCommand: "chat-cli list --limit 1" },
      () =>
        client.createChat({ message: options.prompt, ...(options.title ? { title: options.title } : {}) }),
    );
    if (ctx.globals.json) return printJson(ctx.io, chat);
    const pending = await client.getPendingTask(chat.id);
    printChat(ctx.io, chat, pending);
    printNextStep(ctx.io, chat, pending);
  },
});
