/** `chat-cli whoami`: the account or team the token acts for (from a chat URL, else the login), and where the token came from. */
import { type CliContext, maskToken, notSignedIn, openClient, resolveToken } from "../context.js";
import { defineCommand } from "../define-command.js";
import { printJson, printRows, shown } from "../output.js";

export interface WhoamiResult {
  baseUrl: string;
  /** Slug of the account or team, or null when it cannot be inferred yet (no chats, and no login naming it). */
  account: string | null;
  /** `--token`, `$CHAT_API_KEY`, or the login `chat-cli login` stored in the keychain or a file. */
  tokenSource: "flag" | "env" | "keychain" | "file";
  /** Where the stored login lives, for the keychain and file sources. */
  storage?: string;
  /** The token masked: `abcd…wxyz`. */
  token: string;
}

/**
 * The service has no "who am I" endpoint: the account's slug is read from the path of a chat URL, else (no chat
 * yet) taken from the stored login, whose token response named the account or team chosen at consent.
 */
export async function whoami(_options: object, ctx: CliContext): Promise<void> {
  const resolved = await resolveToken(ctx);
  if (!resolved) return notSignedIn(ctx);
  const client = await openClient(ctx, resolved);
  const page = await client.listChats({ limit: 1 });
  const first = page.data[0];
  const stored = resolved.source === "login" ? await describeStoredLogin(ctx) : undefined;
  const result: WhoamiResult = {
    baseUrl: ctx.globals.baseUrl,
    account: (first?.url ? accountOfChatUrl(first.url, first.id) : null) ?? stored?.account ?? null,
    tokenSource: stored ? stored.kind : resolved.source === "given" ? "flag" : "env",
    ...(stored ? { storage: stored.location } : {}),
    token: maskToken(resolved.token),
  };
  if (ctx.globals.json) return printJson(ctx.io, result);
  const source = {
    flag: "--token flag",
    env: "CHAT_API_KEY environment variable",
    keychain: `chat-cli login, in the keychain (${result.storage})`,
    file: `chat-cli login, in a file (${result.storage})`,
  }[result.tokenSource];
  printRows(
    ctx.io,
    shown<[string, string][]>([
      ["account", result.account ?? "unknown (no chats yet to infer it from; create one first)"],
      ["server", result.baseUrl],
      ["token", result.token],
      ["source", source],
    ]),
  );
}

/** The slug in `<base>/<slug>/chats/<id>`: the path segment before `chats`, else the first one. */
export function accountOfChatUrl(url: string, chatId: string): string | null {
  let segments: string[];
  try {
    segments = new URL(url).pathname.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return null;
  }
  const idAt = segments.lastIndexOf(chatId);
  const before = idAt > 0 ? segments.slice(0, idAt) : segments;
  if (before.at(-1) === "chats" && before.length >= 2) return before.at(-2) ?? null;
  return before[0] ?? null;
}

async function describeStoredLogin(
  ctx: CliContext,
): Promise<{ kind: "keychain" | "file"; location: string; account?: string | undefined }> {
  const { loginSession } = await import("./login.js");
  const session = await loginSession(ctx, { browser: false, tokenStore: "auto" });
  const storage = await session.describeStorage();
  const account = (await session.describeLogin())?.account;
  return { kind: storage.kind === "keychain" ? "keychain" : "file", location: storage.location, account };
}

export const whoamiCommand = defineCommand({ arguments: {}, options: {}, run: whoami });
