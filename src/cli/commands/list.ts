/** `chat-cli list [--topic] [--limit] [--all]`: chats, newest-updated first. */
import { listPage, openClient } from "../context.js";
import { defineCommand, limitFlag, switchFlag, valueFlag } from "../define-command.js";
import { printChatList, printHint, printJson } from "../output.js";

export const listCommand = defineCommand({
  arguments: {},
  options: {
    topic: valueFlag("--topic <text>", "only chats whose title or messages mention this"),
    limit: limitFlag,
    all: switchFlag("--all", "every chat, all pages"),
  },
  async run(options, ctx) {
    const client = await openClient(ctx);
    const params = {
      ...(options.topic !== undefined ? { topic: options.topic } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    };
    const page = await listPage(client.listChats(params), options.all);
    if (ctx.globals.json) return printJson(ctx.io, page);
    if (page.data.length === 0) {
      printHint(ctx.io, options.topic ? `No chats about "${options.topic}".` : "No chats yet.");
      return;
    }
    printChatList(ctx.io, page.data);
    if (page.nextCursor) printHint(ctx.io, "More chats: use --all, or a larger --limit.");
  },
});
