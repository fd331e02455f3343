/** `chat-cli preview <chatId> [--open]`: the chat's preview URL, or open it in the browser. */
import { openInBrowser } from "../browser.js";
import { type CliContext, openClient } from "../context.js";
import { aboutChat } from "../errors.js";
import { printJson, printPreview } from "../output.js";

export interface PreviewOptions {
  chatId: string;
  open?: boolean;
}

export async function preview(options: PreviewOptions, ctx: CliContext): Promise<void> {
  const client = await openClient(ctx);
  const result = await aboutChat(options.chatId, () => client.getPreview(options.chatId));
  if (options.open) await openInBrowser(ctx.io, result.url);
  if (ctx.globals.json) return printJson(ctx.io, result);
  if (!options.open) printPreview(ctx.io, result);
}
