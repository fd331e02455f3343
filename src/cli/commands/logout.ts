/** `chat-cli logout`: forget (and revoke where possible) the stored login for the base URL. */
import type { CliContext } from "../context.js";
import { printHint, printJson } from "../output.js";
import { loginSession } from "./login.js";

export async function logout(_options: object, ctx: CliContext): Promise<void> {
  const session = await loginSession(ctx, { browser: false });
  await session.signOut();
  if (ctx.globals.json) return printJson(ctx.io, { baseUrl: ctx.globals.baseUrl, signedIn: false });
  printHint(ctx.io, `Signed out of ${ctx.globals.baseUrl}.`);
  if (process.env.CHAT_API_KEY)
    printHint(ctx.io, "Note: CHAT_API_KEY is still set and is used when present.");
}
