/** `chat-cli get <chatId> [--web]`: a chat's summary with its URL and pending task, or open it in the browser. */
import { openInBrowser } from "../browser.js";
import { type CliContext, openClient } from "../context.js";
import { type CommandInput, chatIdArgument, defineCommand, switchFlag } from "../define-command.js";
import { aboutChat, CliError, EXIT } from "../errors.js";
import { printChat, printJson, printNextStep } from "../output.js";

const getArguments = { chatId: chatIdArgument };
const getFlags = { web: switchFlag("--web", "open the chat in the browser") };
export type GetOptions = CommandInput<typeof getArguments, typeof getFlags>;

export async function get(options: GetOptions, ctx: CliContext): Promise<void> {
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
}

export const getCommand = defineCommand({ arguments: getArguments, options: getFlags, run: get });
