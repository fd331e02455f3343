/** `chat-cli message <chatId> <messageId>`: one message with its content and what it asks for. */
import { pendingTaskOf } from "../../wire/index.js";
import { type CliContext, openClient } from "../context.js";
import { type CommandInput, chatIdArgument, defineCommand } from "../define-command.js";
import { CliError, serverMessage, statusOf } from "../errors.js";
import { hintArgument, printJson, printMessage } from "../output.js";

const messageArguments = { chatId: chatIdArgument, messageId: { name: "<messageId>" } };
export type MessageOptions = CommandInput<typeof messageArguments, Record<never, never>>;

export async function message(options: MessageOptions, ctx: CliContext): Promise<void> {
  const client = await openClient(ctx);
  const found = await client.getMessage(options.chatId, options.messageId).catch((error: unknown) => {
    if (statusOf(error) !== 404) throw error;
    throw new CliError(
      `message ${options.messageId} of chat ${options.chatId} not found: ${serverMessage(error)}`,
      undefined,
      `See the chat's messages with \`chat-cli messages ${hintArgument(options.chatId)}\`.`,
      error,
    );
  });
  if (ctx.globals.json) return printJson(ctx.io, found);
  printMessage(ctx.io, found, pendingTaskOf(found));
}

export const messageCommand = defineCommand({ arguments: messageArguments, options: {}, run: message });
