/** The commander program of chat-cli: global options, one subcommand per command file, loaded only when run. */
import { Command, InvalidArgumentError } from "commander";
import type { CliContext, GlobalOptions } from "./context.js";

/** Builds the context a command runs with from the options commander parsed. */
export type ContextFactory = (globals: GlobalOptions) => CliContext;

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > 100) {
    throw new InvalidArgumentError("must be a whole number from 1 to 100.");
  }
  return limit;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535)
    throw new InvalidArgumentError("must be a port number from 0 to 65535.");
  return port;
}

function parseNames(value: string): string[] {
  const names = value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (names.length === 0) throw new InvalidArgumentError("give the integration names, comma-separated.");
  return names;
}

function parseBaseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new InvalidArgumentError("must be an http(s) URL, e.g. http://127.0.0.1:8787.");
  }
  return value.replace(/\/+$/, "");
}

const EXAMPLES = `
Examples:
  $ chat-cli create "Add a database to my app" --title "Database"
  $ chat-cli list --topic database
  $ chat-cli pending <chatId>
  $ chat-cli resolve <chatId> --connected
  $ chat-cli resolve <chatId> --approve
  $ chat-cli preview <chatId> --open

Environment: CHAT_API_URL (base URL), CHAT_API_KEY (token), CHAT_CONFIG_DIR, NO_COLOR, BROWSER.
Exit codes: 0 ok, 1 error, 2 usage, 3 conflict (the chat has moved on), 4 authentication needed.`;

export interface ProgramOutput {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

export function buildProgram(
  version: string,
  output: ProgramOutput,
  contextFor: ContextFactory,
  defaultBaseUrl: () => string,
): Command {
  const program = new Command("chat-cli")
    .description("Work with the AI-assisted chat service from a terminal or a script.")
    .version(version, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .option(
      "--base-url <url>",
      "service base URL (default: $CHAT_API_URL or http://127.0.0.1:8787)",
      parseBaseUrl,
    )
    .option("--token <token>", "API key or access token (default: $CHAT_API_KEY, then the stored login)")
    .option("--json", "print exactly the response JSON on stdout")
    .option("--no-color", "never use colour (NO_COLOR is honoured too)")
    .option("--debug", "details and stack traces on stderr")
    .exitOverride()
    .configureOutput({
      writeOut: output.writeOut,
      writeErr: output.writeErr,
      // One line per error, commander's suggestion included.
      outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, " ")}\n`),
    })
    .showSuggestionAfterError(true)
    .addHelpText("after", EXAMPLES);

  const ctx = (command: Command): CliContext => {
    const all = command.optsWithGlobals() as Partial<GlobalOptions>;
    return contextFor({
      baseUrl: all.baseUrl ?? defaultBaseUrl(),
      ...(all.token !== undefined ? { token: all.token } : {}),
      json: all.json === true,
      color: all.color !== false,
      debug: all.debug === true,
    });
  };

  program
    .command("login")
    .description("sign in with your browser (OAuth) and store the credentials for this base URL")
    .option("--no-browser", "print the sign-in URL instead of opening a browser")
    .action(async (opts: { browser: boolean }, command: Command) => {
      const { login } = await import("./commands/login.js");
      await login({ browser: opts.browser }, ctx(command));
    });

  program
    .command("logout")
    .description("remove the stored credentials for this base URL")
    .action(async (_opts: object, command: Command) => {
      const { logout } = await import("./commands/logout.js");
      await logout({}, ctx(command));
    });

  program
    .command("whoami")
    .description("show the account or team of the token in use and where the token came from")
    .action(async (_opts: object, command: Command) => {
      const { whoami } = await import("./commands/whoami.js");
      await whoami({}, ctx(command));
    });

  program
    .command("create")
    .description("create a chat from a prompt and show the assistant's answer state")
    .argument("<prompt...>", "the first message")
    .option("--title <title>", "chat title (default: the start of the prompt)")
    .action(async (prompt: string[], opts: { title?: string }, command: Command) => {
      const { create } = await import("./commands/create.js");
      await create({ prompt: prompt.join(" "), ...(opts.title ? { title: opts.title } : {}) }, ctx(command));
    });

  program
    .command("list")
    .description("list chats, newest-updated first")
    .option("--topic <text>", "only chats whose title or messages mention this")
    .option("--limit <n>", "page size, 1-100 (default 20)", parseLimit)
    .option("--all", "every chat, all pages")
    .action(async (opts: { topic?: string; limit?: number; all?: boolean }, command: Command) => {
      const { list } = await import("./commands/list.js");
      await list(opts, ctx(command));
    });

  program
    .command("get")
    .description("show a chat: URL, hosting project and what it waits for")
    .argument("<chatId>")
    .option("--web", "open the chat in the browser")
    .action(async (chatId: string, opts: { web?: boolean }, command: Command) => {
      const { get } = await import("./commands/get.js");
      await get({ chatId, ...opts }, ctx(command));
    });

  program
    .command("messages")
    .description("list a chat's messages, newest first")
    .argument("<chatId>")
    .option("--limit <n>", "page size, 1-100 (default 20)", parseLimit)
    .option("--all", "every message, all pages")
    .action(async (chatId: string, opts: { limit?: number; all?: boolean }, command: Command) => {
      const { messages } = await import("./commands/messages.js");
      await messages({ chatId, ...opts }, ctx(command));
    });

  program
    .command("message")
    .description("show one message with its parts")
    .argument("<chatId>")
    .argument("<messageId>")
    .action(async (chatId: string, messageId: string, _opts: object, command: Command) => {
      const { message } = await import("./commands/message.js");
      await message({ chatId, messageId }, ctx(command));
    });

  program
    .command("send")
    .description("send a message and show the assistant's reply (rejects any pending request)")
    .argument("<chatId>")
    .argument("<text...>", "the message")
    .action(async (chatId: string, text: string[], _opts: object, command: Command) => {
      const { send } = await import("./commands/send.js");
      await send({ chatId, text: text.join(" ") }, ctx(command));
    });

  program
    .command("pending")
    .description("show what the latest assistant message waits for, and whether the chat has a hostProjectId")
    .argument("<chatId>")
    .action(async (chatId: string, _opts: object, command: Command) => {
      const { pending } = await import("./commands/pending.js");
      await pending({ chatId }, ctx(command));
    });

  program
    .command("resolve")
    .description("resolve what the chat waits for (with no flag on a terminal: show it and ask)")
    .argument("<chatId>")
    .option(
      "--integrations <a,b>",
      "confirm these integrations as connected (must match the request)",
      parseNames,
    )
    .option("--connected", "confirm exactly the requested integrations as connected")
    .option("--reject", "reject the integration request")
    .option("--approve", "approve the pending script permissions, unchanged")
    .option("--task <json|@file>", "send this task as is (JSON, or @path to a JSON file)")
    .action(async (chatId: string, opts: Record<string, unknown>, command: Command) => {
      const { resolve } = await import("./commands/resolve.js");
      await resolve({ chatId, ...opts }, ctx(command));
    });

  program
    .command("preview")
    .description("print the chat's preview URL")
    .argument("<chatId>")
    .option("--open", "open the preview in the browser")
    .action(async (chatId: string, opts: { open?: boolean }, command: Command) => {
      const { preview } = await import("./commands/preview.js");
      await preview({ chatId, ...opts }, ctx(command));
    });

  program
    .command("serve")
    .description("run the reference server locally and print its URLs, accounts and dev API keys")
    .option("--port <port>", "port to listen on (0 picks a free one)", parsePort, 8787)
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option("--auto-approve <slug>", "approve OAuth sign-ins for this account or team without a consent page")
    .option("--data <file>", "keep the server's data in this JSON file")
    .action(
      async (opts: { port: number; host: string; autoApprove?: string; data?: string }, command: Command) => {
        const { serve } = await import("./commands/serve.js");
        await serve(opts, ctx(command));
      },
    );

  return program;
}
