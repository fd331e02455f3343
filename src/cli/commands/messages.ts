/** `chat-cli messages <chatId> [--limit] [--all]`: a chat's messages, newest first. */
import type { ListPage, Message } from "../../wire/index.js";
import { type CliContext, openClient } from "../context.js";
import { type CommandInput, chatIdArgument, defineCommand, switchFlag } from "../define-command.js";
import { aboutChat } from "../errors.js";
import { limitFlag } from "../flag-values.js";
import { printHint, printJson, printMessageList } from "../output.js";

const messagesArguments = { chatId: chatIdArgument };
const messagesFlags = { limit: limitFlag, all: switchFlag("--all", "every message, all pages") };
export type MessagesOptions = CommandInput<typeof messagesArguments, typeof messagesFlags>;

export async function messages(options: MessagesOptions, ctx: CliContext): Promise<void> {
  const client = await openClient(ctx);
  const params = options.limit !== undefined ? { limit: options.limit } : {};
  const page = await aboutChat(options.chatId, async (): Promise<ListPage<Message>> => {
    if (options.all) {
      const data: Message[] = [];
      for await (const message of client.listMessages(options.chatId, params)) data.push(message);
      return { object: "list", data, nextCursor: null };
    }
    const first = await client.listMessages(options.chatId, params);
    return { object: "list", data: first.data, nextCursor: first.nextCursor };
  });
  if (ctx.globals.json) return printJson(ctx.io, page);
  printMessageList(ctx.io, page.data);
  if (page.nextCursor) printHint(ctx.io, "More messages: use --all, or a larger --limit.");
}

export const messagesCommand = defineCommand({
  arguments: messagesArguments,
  options: messagesFlags,
  run: messages,
});
