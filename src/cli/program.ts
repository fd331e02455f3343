/** The commander program of chat-cli, built from the command table: usage errors, help and every unusual argv. */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { packageVersion } from "../internal/package-version.js";
import {
  COMMANDS,
  GLOBAL_OPTIONS,
  type Operand,
  type OptionSpec,
  OptionValueError,
} from "./command-table.js";
import { type CliContext, type GivenGlobals, type GlobalOptions, globalOptionsFrom } from "./context.js";
import { EXIT, type ExitCode } from "./errors.js";
import type { CliIo } from "./io.js";

/** Builds the context a command runs with from the options commander parsed. */
export type ContextFactory = (globals: GlobalOptions) => CliContext;

/** A commander Option from its spec; a refused value becomes commander's InvalidArgumentError (exit 2). */
function optionOf(spec: OptionSpec): Option {
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

  for (const spec of COMMANDS) {
    const command = program.command(spec.name).description(spec.description);
    for (const argument of spec.arguments) command.argument(argument.name, argument.description);
    for (const option of spec.options) command.addOption(optionOf(option));
    // commander calls an action with the operands, then the options, then the command itself.
    command.action(async (...params: unknown[]) => {
      const self = params.at(-1) as Command;
      const opts = params.at(-2) as Record<string, unknown>;
      await spec.run(params.slice(0, -2) as Operand[], opts, ctx(self));
    });
  }
  return program;
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
  const program = buildProgram(
    packageVersion(),
    { writeOut: io.stdout, writeErr: io.stderr },
    contextFor,
    defaultBaseUrl,
  );
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT.ok;
    return EXIT.usage;
  }
}
