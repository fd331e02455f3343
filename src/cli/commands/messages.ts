/** `chat-cli messages <chatId> [--limit] [--all]`: a chat's messages, newest first. */
import { listPage, openClient } from "../context.js";
import { chatIdArgument, defineCommand, limitFlag, switchFlag } from "../define-command.js";
import { aboutChat } from "../errors.js";
import { printHint, printJson, printMessageList } from "../output.js";

export const messagesCommand = defineCommand({
  arguments: { chatId: chatIdArgument },
  options: { limit: limitFlag, all: switchFlag("--all", "every message, all pages") },
  async run(options, ctx) {
    const client = await openClient(ctx);
    const params = options.limit !== undefined ? { limit: options.limit } : {};
    const page = await aboutChat(options.chatId, () =>
      listPage(client.listMessages(options.chatId, params), options.all),
    );
    if (ctx.globals.json) return printJson(ctx.io, page);
    printMessageList(ctx.io, page.data);
    if (page.nextCursor) printHint(ctx.io, "More messages: use --all, or a larger --limit.");
  },
});
