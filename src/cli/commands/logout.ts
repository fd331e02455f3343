/** `chat-cli logout`: forget (and revoke where possible) the stored login for the base URL. */
import { configDir } from "../../config/index.js";
import type { CliContext } from "../context.js";
import { defineCommand } from "../define-command.js";
import { CliError, EXIT } from "../errors.js";
import { printHint, printJson } from "../output.js";
import { loginSession } from "./login.js";

/** Exit 1, naming the stored logins, when none matched the base URL (a typo, a trailing path). */
async function logout(_options: object, ctx: CliContext): Promise<void> {
  const session = await loginSession(ctx, { browser: false, tokenStore: "auto" });
  if (!(await session.signOut())) {
    const { storedLoginUrls } = await import("../../auth/index.js");
    const stored = await storedLoginUrls(configDir(ctx.env ?? process.env));
    throw new CliError(
      `no stored login for ${ctx.globals.baseUrl}, so nothing was removed`,
      EXIT.error,
      stored.length > 0
        ? `Stored logins (chat-cli signs in to <base URL>/v2): ${stored.join(", ")}`
        : "There are no stored logins.",
    );
  }
  if (ctx.globals.json) return printJson(ctx.io, { baseUrl: ctx.globals.baseUrl, signedIn: false });
  printHint(ctx.io, `Signed out of ${ctx.globals.baseUrl}; its stored login was removed.`);
  if ((ctx.env ?? process.env).CHAT_API_KEY)
    printHint(ctx.io, "Note: CHAT_API_KEY is still set and is used when present.");
}

export const logoutCommand = defineCommand({ arguments: {}, options: {}, run: logout });
