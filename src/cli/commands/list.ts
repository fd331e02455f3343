/** `chat-cli list [--topic] [--limit] [--all]`: chats, newest-updated first. */
import type { Chat, ListPage } from "../../wire/index.js";
import { type CliContext, openClient } from "../context.js";
import { type CommandInput, defineCommand, switchFlag, valueFlag } from "../define-command.js";
import { limitFlag } from "../flag-values.js";
import { printChatList, printHint, printJson } from "../output.js";

const listFlags = {
  topic: valueFlag("--topic <text>", "only chats whose title or messages mention this"),
  limit: limitFlag,
  all: switchFlag("--all", "every chat, all pages"),
};
export type ListOptions = CommandInput<Record<never, never>, typeof listFlags>;

export async function list(options: ListOptions, ctx: CliContext): Promise<void> {
  const client = await openClient(ctx);
  const params = {
    ...(options.topic !== undefined ? { topic: options.topic } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
  };
  let page: ListPage<Chat>;
  if (options.all) {
    const data: Chat[] = [];
    for await (const chat of client.listChats(params)) data.push(chat);
    page = { object: "list", data, nextCursor: null };
  } else {
    const first = await client.listChats(params);
    page = { object: "list", data: first.data, nextCursor: first.nextCursor };
  }
  if (ctx.globals.json) return printJson(ctx.io, page);
  if (page.data.length === 0) {
    printHint(ctx.io, options.topic ? `No chats about "${options.topic}".` : "No chats yet.");
    return;
  }
  printChatList(ctx.io, page.data);
  if (page.nextCursor) printHint(ctx.io, "More chats: use --all, or a larger --limit.");
}

export const listCommand = defineCommand({ arguments: {}, options: listFlags, run: list });
