/** The commander program of chat-cli: the global options, every command by name, and the named one's flags once it loads. */
import { Command, CommanderError, Help, InvalidArgumentError, Option } from "commander";
import { packageVersion } from "../internal/package-version.js";
import {
  type CliContext,
  type CompletionTable,
  type Flag,
  type GivenGlobals,
  type GlobalOptions,
  globalOptionsFrom,
} from "./context.js";
import {
  type CommandDefinition,
  type CommandInput,
  type FlagSpec,
  OptionValueError,
  parseBaseUrl,
  parseSeconds,
} from "./define-command.js";
import { EXIT, type ExitCode } from "./errors.js";
import type { CliIo } from "./io.js";

/** A command by name, with the summary the program's help lists; its module loads only when it runs (as changesets does). */
export interface CommandEntry {
  name: string;
  description: string;
  /** What the program's help shows after the name (commander's words, checked against the definition in a test). */
  usage: string;
  load(): Promise<CommandDefinition>;
}

export const COMMANDS: CommandEntry[] = [
  {
    name: "login",
    description:
      "sign in with your browser (OAuth), as a client with --client-credentials or --workload-token-file, or store a key from stdin with --with-token; the credentials are kept for this base URL",
    usage: "[options]",
    load: async () => (await import("./commands/login.js")).loginCommand,
  },
  {
    name: "logout",
    description: "remove the stored credentials for this base URL",
    usage: "",
    load: async () => (await import("./commands/logout.js")).logoutCommand,
  },
  {
    name: "whoami",
    description: "show the account or team of the token in use and where the token came from",
    usage: "",
    load: async () => (await import("./commands/whoami.js")).whoamiCommand,
  },
  {
    name: "create",
    description: "create a chat from a prompt and show the assistant's answer state",
    usage: "[options] <prompt...>",
    load: async () => (await import("./commands/create.js")).createCommand,
  },
  {
    name: "list",
    description: "list chats, newest-updated first",
    usage: "[options]",
    load: async () => (await import("./commands/list.js")).listCommand,
  },
  {
    name: "get",
    description: "show a chat: URL, hosting project and what it waits for",
    usage: "[options] <chatId>",
    load: async () => (await import("./commands/get.js")).getCommand,
  },
  {
    name: "messages",
    description: "list a chat's messages, newest first",
    usage: "[options] <chatId>",
    load: async () => (await import("./commands/messages.js")).messagesCommand,
  },
  {
    name: "message",
    description: "show one message with its parts",
    usage: "<chatId> <messageId>",
    load: async () => (await import("./commands/message.js")).messageCommand,
  },
  {
    name: "send",
    description: "send a message and show the assistant's reply (rejects any pending request)",
    usage: "<chatId> <text...>",
    load: async () => (await import("./commands/send.js")).sendCommand,
  },
  {
    name: "pending",
    description: "show what the latest assistant message waits for, and whether the chat has a hostProjectId",
    usage: "<chatId>",
    load: async () => (await import("./commands/pending.js")).pendingCommand,
  },
  {
    name: "resolve",
    description: "resolve what the chat waits for (with no flag on a terminal: show it and ask)",
    usage: "[options] <chatId>",
    load: async () => (await import("./commands/resolve.js")).resolveCommand,
  },
  {
    name: "preview",
    description: "print the chat's preview URL",
    usage: "[options] <chatId>",
    load: async () => (await import("./commands/preview.js")).previewCommand,
  },
  {
    name: "serve",
    description: "run the reference server locally and print its URLs, accounts and dev API keys",
    usage: "[options]",
    load: async () => (await import("./commands/serve.js")).serveCommand,
  },
  {
    name: "completion",
    description: "print a completion script for bash, zsh or fish",
    usage: "<shell>",
    load: async () => (await import("./commands/completion.js")).completionCommand,
  },
];

/** Builds the context a command runs with from the options commander parsed. */
export type ContextFactory = (globals: GlobalOptions) => CliContext;

/** The program's own options (besides -h and -V), recognised before and after the command name. */
const GLOBAL_OPTIONS: FlagSpec<unknown>[] = [
  {
    flags: "--base-url <url>",
    description: "service base URL (default: $CHAT_API_URL or http://127.0.0.1:8787)",
    parse: parseBaseUrl,
  },
  {
    flags: "--token <token>",
    description: "API key or access token (default: $CHAT_API_KEY, then the stored login)",
  },
  { flags: "--json", description: "print exactly the response JSON on stdout" },
  { flags: "--no-color", description: "never use colour (NO_COLOR is honoured too)" },
  { flags: "--debug", description: "details and stack traces on stderr" },
  {
    flags: "--timeout <seconds>",
    description:
      "the most one request waits, the assistant's reply included (default 60 s, 600 s for replies)",
    parse: parseSeconds,
  },
];

/** A commander Option from its spec; a refused value becomes commander's InvalidArgumentError (exit 2). */
function optionOf(spec: FlagSpec<unknown>): Option {
  const option = new Option(spec.flags, spec.description);
  const parse = spec.parse;
  if (parse) {
    option.argParser((value: string) => {
      try {
        return parse(value);
      } catch (error) {
        if (error instanceof OptionValueError) throw new InvalidArgumentError(error.message);
        throw error;
      }
    });
  }
  if (spec.defaultValue !== undefined) option.default(spec.defaultValue);
  return option;
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
Exit codes: 0 ok, 1 error, 2 usage, 3 conflict (the chat has moved on), 4 authentication needed,
  130 interrupted while waiting for the assistant (the request may still complete).`;

export function buildProgram(
  version: string,
  output: { writeOut(text: string): void; writeErr(text: string): void },
  contextFor: ContextFactory,
  defaultBaseUrl: () => string,
): { program: Command; declareNamed(name: string | undefined): Promise<void> } {
  const program = new Command("chat-cli")
    .description("Work with the AI-assisted chat service from a terminal or a script.")
    .version(version, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help");
  for (const spec of GLOBAL_OPTIONS) program.addOption(optionOf(spec));
  program
    .exitOverride()
    .configureOutput({
      writeOut: output.writeOut,
      writeErr: output.writeErr,
      // One line per error, commander's suggestion included.
      outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, " ")}\n`),
    })
    .showSuggestionAfterError(true)
    // A command's help lists the global options too (--json, --base-url, ...): they apply to every command.
    .configureHelp({ showGlobalOptions: true })
    .addHelpText("after", EXAMPLES);

  const ctx = (command: Command): CliContext =>
    contextFor(globalOptionsFrom(command.optsWithGlobals() as GivenGlobals, defaultBaseUrl));

  const entries = new Map<string, CommandEntry>();
  for (const entry of COMMANDS) {
    entries.set(entry.name, entry);
    program.command(entry.name).description(entry.description);
  }
  // The program's help lists each command with its usage without loading the command's module.
  const helpConfig = program.configureHelp();
  program.configureHelp({
    ...helpConfig,
    subcommandTerm: (command) => {
      const usage = entries.get(command.name())?.usage;
      if (usage === undefined) return new Help().subcommandTerm(command);
      return usage ? `${command.name()} ${usage}` : command.name();
    },
  });
  // commander names the command before it parses the command's own words: load its module then, and declare
  // its arguments and flags (help for it, `help <command>` and its usage errors need them).
  const declared = new Set<string>();
  const declareNamed = async (name: string | undefined): Promise<void> => {
    const entry = name === undefined ? undefined : entries.get(name);
    const command = program.commands.find((candidate) => candidate.name() === name);
    if (!entry || !command || declared.has(entry.name)) return;
    declared.add(entry.name);
    declare(command, await entry.load(), ctx);
  };
  program.hook("preSubcommand", (_program, command) => declareNamed(command.name()));
  return { program, declareNamed };
}

/** A command's arguments, flags and action from its definition; its run gets the values under the definition's keys. */
export function declare(
  command: Command,
  definition: CommandDefinition,
  ctx: (command: Command) => CliContext,
): void {
  const argumentKeys = Object.keys(definition.arguments);
  for (const spec of Object.values(definition.arguments)) command.argument(spec.name, spec.description);
  const flagKeys: [key: string, attribute: string][] = [];
  for (const [key, spec] of Object.entries(definition.options)) {
    const option = optionOf(spec);
    command.addOption(option);
    flagKeys.push([key, option.attributeName()]);
  }
  // commander calls an action with the operands, then the options, then the command itself.
  command.action(async (...params: unknown[]) => {
    const self = params.at(-1) as Command;
    const given = self.opts();
    const input: Record<string, unknown> = {};
    argumentKeys.forEach((key, index) => {
      const operand = params[index];
      // A variadic argument's words are one text.
      input[key] = Array.isArray(operand) ? operand.join(" ") : (operand ?? "");
    });
    for (const [key, attribute] of flagKeys)
      if (given[attribute] !== undefined) input[key] = given[attribute];
    // The one place the parsed values meet the types: commander parsed them by the very specs the type comes from.
    await definition.run(
      input as CommandInput<typeof definition.arguments, typeof definition.options>,
      ctx(self),
    );
  });
}

/**
 * Parses `argv` with commander and runs the command it names. commander prints help, the version and usage
 * errors itself: those end here with exit 0 or 2. A command's own failure is thrown to the caller.
 */
export async function runProgram(
  argv: string[],
  io: CliIo,
  contextFor: ContextFactory,
  defaultBaseUrl: () => string,
): Promise<ExitCode> {
  const { program, declareNamed } = buildProgram(
    packageVersion(),
    { writeOut: io.stdout, writeErr: io.stderr },
    contextFor,
    defaultBaseUrl,
  );
  try {
    // `help <command>` prints the command's help without the hook that loads it: load the named one first.
    const help = argv.indexOf("help");
    if (help >= 0) await declareNamed(argv[help + 1]);
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // `--help` ends as helpDisplayed, `help [command]` as help (commander's two words for one request): both exit 0.
    if (["commander.helpDisplayed", "commander.help", "commander.version"].includes(error.code))
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return EXIT.usage;
  }
}

const HELP_FLAG: Flag = { long: "--help", short: "-h", takesValue: false, description: "show help" };

function flagOf(option: Option): Flag | undefined {
  if (!option.long) return undefined;
  return {
    long: option.long,
    ...(option.short ? { short: option.short } : {}),
    takesValue: option.required || option.optional,
    description: option.description,
  };
}

/** The table of the program with every command declared (its flags loaded), as `chat-cli --help` knows it. */
export async function commandTable(): Promise<CompletionTable> {
  const quiet = { writeOut: () => {}, writeErr: () => {} };
  const { program, declareNamed } = buildProgram(
    "0",
    quiet,
    () => {
      throw new Error("not run");
    },
    () => "",
  );
  for (const entry of COMMANDS) await declareNamed(entry.name);
  const flags = (command: Command) => [
    ...command.options.map(flagOf).filter((flag): flag is Flag => flag !== undefined),
    HELP_FLAG,
  ];
  return {
    globals: flags(program),
    commands: program.commands.map((command) => ({
      name: command.name(),
      description: command.description(),
      flags: flags(command),
    })),
  };
}
