/** `chat-cli message <chatId> <messageId>`: one message with its content and what it asks for. */
import { pendingTaskOf } from "../../wire/index.js";
import { openClient } from "../context.js";
import { chatIdArgument, defineCommand } from "../define-command.js";
import { CliError, serverMessage, statusOf } from "../errors.js";
import { hintArgument, printJson, printMessage } from "../output.js";

export const messageCommand = defineCommand({
  arguments: { chatId: chatIdArgument, messageId: { name: "<messageId>" } },
  options: {},
  async run(options, ctx) {
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
  },
});
