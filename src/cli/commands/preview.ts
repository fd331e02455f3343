/** `chat-cli preview <chatId> [--open]`: the chat's preview URL, or open it in the browser. */
import { openClient } from "../context.js";
import { chatIdArgument, defineCommand, switchFlag } from "../define-command.js";
import { aboutChat } from "../errors.js";
import { openInBrowser } from "../io.js";
import { printJson, printPreview } from "../output.js";

export const previewCommand = defineCommand({
  arguments: { chatId: chatIdArgument },
  options: { open: switchFlag("--open", "open the preview in the browser") },
  async run(options, ctx) {
    const client = await openClient(ctx);
    const result = await aboutChat(options.chatId, () => client.getPreview(options.chatId));
    if (options.open) await openInBrowser(ctx.io, result.url);
    if (ctx.globals.json) return printJson(ctx.io, result);
    if (!options.open) printPreview(ctx.io, result);
  },
});
