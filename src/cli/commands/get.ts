/** `chat-cli get <chatId> [--web]`: a chat's summary with its URL and pending task, or open it in the browser. */
import { openClient } from "../context.js";
import { chatIdArgument, defineCommand, switchFlag } from "../define-command.js";
import { aboutChat, CliError, EXIT } from "../errors.js";
import { openInBrowser } from "../io.js";
import { printChat, printJson, printNextStep } from "../output.js";

export const getCommand = defineCommand({
  arguments: { chatId: chatIdArgument },
  options: { web: switchFlag("--web", "open the chat in the browser") },
  async run(options, ctx) {
    const client = await openClient(ctx);
    const chat = await aboutChat(options.chatId, () => client.getChat(options.chatId));
    if (options.web) {
      if (!chat.url) throw new CliError(`the service sent no url for chat ${chat.id}`, EXIT.error);
      await openInBrowser(ctx.io, chat.url);
    }
    if (ctx.globals.json) return printJson(ctx.io, chat);
    if (options.web) return;
    const pending = await client.getPendingTask(chat.id);
    printChat(ctx.io, chat, pending);
    printNextStep(ctx.io, chat, pending);
  },
});
