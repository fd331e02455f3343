/** `chat-cli send <chatId> <text...>`: send a message and print the assistant's reply (a follow-up rejects any pause). */
import { pendingTaskOf } from "../../wire/index.js";
import { openClient, waitForAssistant } from "../context.js";
import { chatIdArgument, defineCommand } from "../define-command.js";
import { aboutChat } from "../errors.js";
import { hintArgument, printJson, printMessage, printNextStep } from "../output.js";

export const sendCommand = defineCommand({
  arguments: { chatId: chatIdArgument, text: { name: "<text...>", description: "the message" } },
  options: {},
  async run(options, ctx) {
    const client = await openClient(ctx);
    const reply = await waitForAssistant(
      ctx,
      {
        label: "Waiting for the assistant…",
        checkCommand: `chat-cli messages ${hintArgument(options.chatId)} --limit 2`,
      },
      () => aboutChat(options.chatId, () => client.sendMessage(options.chatId, { message: options.text })),
    );
    if (ctx.globals.json) return printJson(ctx.io, reply);
    const pending = pendingTaskOf(reply);
    printMessage(ctx.io, reply, pending);
    if (pending) printNextStep(ctx.io, await client.getChat(options.chatId), pending);
  },
});
