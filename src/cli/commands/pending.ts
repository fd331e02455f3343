/** `chat-cli pending <chatId>`: what the latest assistant message waits for, and whether the flow can proceed. */
import { openClient } from "../context.js";
import { chatIdArgument, defineCommand } from "../define-command.js";
import { aboutChat } from "../errors.js";
import { printJson, printNextStep, printPending } from "../output.js";

export const pendingCommand = defineCommand({
  arguments: { chatId: chatIdArgument },
  options: {},
  /** With --json: `{ chat, pending }`, `chat` as getChat returns it and `pending` as getPendingTask does (or null). */
  async run(options, ctx) {
    const client = await openClient(ctx);
    const chat = await aboutChat(options.chatId, () => client.getChat(options.chatId));
    const task = await client.getPendingTask(options.chatId);
    if (ctx.globals.json) return printJson(ctx.io, { chat, pending: task });
    printPending(ctx.io, chat, task);
    printNextStep(ctx.io, chat, task);
  },
});
