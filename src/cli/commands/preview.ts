/** `chat-cli preview <chatId> [--open]`: the chat's preview URL, or open it in the browser. */
import { openInBrowser } from "../browser.js";
import { type CliContext, openClient } from "../context.js";
import { type CommandInput, chatIdArgument, defineCommand, switchFlag } from "../define-command.js";
import { aboutChat } from "../errors.js";
import { printJson, printPreview } from "../output.js";

const previewArguments = { chatId: chatIdArgument };
const previewFlags = { open: switchFlag("--open", "open the preview in the browser") };
export type PreviewOptions = CommandInput<typeof previewArguments, typeof previewFlags>;

export async function preview(options: PreviewOptions, ctx: CliContext): Promise<void> {
  const client = await openClient(ctx);
  const result = await aboutChat(options.chatId, () => client.getPreview(options.chatId));
  if (options.open) await openInBrowser(ctx.io, result.url);
  if (ctx.globals.json) return printJson(ctx.io, result);
  if (!options.open) printPreview(ctx.io, result);
}

export const previewCommand = defineCommand({
  arguments: previewArguments,
  options: previewFlags,
  run: preview,
});
