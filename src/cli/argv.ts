/**
 * The fast path: reads a plain argv (known long flags, the right number of operands) from the command table
 * without loading commander, which costs more than most commands. Anything else (help, version, `--`,
 * `--flag=value`, short flags, unknown flags, missing or extra operands, a refused value) answers null, and
 * commander parses it instead, so usage errors and help read exactly as commander prints them.
 */
import {
  COMMANDS,
  type CommandSpec,
  GLOBAL_OPTIONS,
  type Operand,
  type OptionSpec,
} from "./command-table.js";
import type { GivenGlobals } from "./context.js";

/** What the fast path read; `globals` holds only the global options that were given. */
export interface PlainArgv {
  command: CommandSpec;
  operands: Operand[];
  options: Record<string, unknown>;
  globals: GivenGlobals;
}

interface Flag {
  spec: OptionSpec;
  /** The option's key in commander's options object: `--auto-approve` is `autoApprove`, `--no-browser` is `browser`. */
  key: string;
  takesValue: boolean;
  negated: boolean;
}

/** `--name` of every option, keyed as commander keys it (camelCase, `no-` dropped). */
function flagsOf(specs: OptionSpec[]): Map<string, Flag> {
  const flags = new Map<string, Flag>();
  for (const spec of specs) {
    const [long = "", value] = spec.flags.split(" ");
    const negated = long.startsWith("--no-");
    const key = long.slice(negated ? 5 : 2).replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
    flags.set(long, { spec, key, takesValue: value !== undefined, negated });
  }
  return flags;
}

/** Sets one option as commander would: the next word as its value (whatever it looks like), parsed; last one wins. */
function take(flag: Flag, next: string | undefined, into: Record<string, unknown>): boolean {
  if (!flag.takesValue) {
    into[flag.key] = !flag.negated;
    return true;
  }
  if (next === undefined) return false;
  try {
    into[flag.key] = flag.spec.parse ? flag.spec.parse(next) : next;
  } catch {
    return false;
  }
  return true;
}

const GLOBAL_FLAGS = flagsOf(GLOBAL_OPTIONS);

/**
 * Tokens commander's program would act on (beyond GLOBAL_FLAGS): help and version, short-flag groups
 * starting with them, `--` and inline values of the global options.
 */
function programWouldIntercept(token: string): boolean {
  return (
    token === "--" ||
    token === "--help" ||
    token === "--version" ||
    token.startsWith("-h") ||
    token.startsWith("-V") ||
    /^--(base-url|token)=/.test(token)
  );
}

/** Reads `argv` (without node and script) as commander would, or null when commander must. */
export function parsePlainArgv(
  argv: readonly string[],
  commands: readonly CommandSpec[] = COMMANDS,
): PlainArgv | null {
  // commander's program takes its own options from anywhere in argv first; the rest goes to the command.
  const globals: Record<string, unknown> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (programWouldIntercept(token)) return null;
    const flag = GLOBAL_FLAGS.get(token);
    if (!flag) {
      rest.push(token);
      continue;
    }
    if (!take(flag, argv[i + 1], globals)) return null;
    if (flag.takesValue) i++;
  }

  const command = commands.find((candidate) => candidate.name === rest[0]);
  if (!command) return null;
  const flags = flagsOf(command.options);
  const options: Record<string, unknown> = {};
  for (const [, flag] of flags) {
    if (flag.negated) options[flag.key] = true;
    else if (flag.spec.defaultValue !== undefined) options[flag.key] = flag.spec.defaultValue;
  }
  const words: string[] = [];
  for (let i = 1; i < rest.length; i++) {
    const token = rest[i] as string;
    if (token.length < 2 || !token.startsWith("-")) {
      words.push(token);
      continue;
    }
    const flag = flags.get(token);
    if (!flag || !take(flag, rest[i + 1], options)) return null;
    if (flag.takesValue) i++;
  }

  const operands: Operand[] = [];
  for (const [index, argument] of command.arguments.entries()) {
    if (argument.name.endsWith("...>")) {
      if (words.length <= index) return null;
      operands.push(words.slice(index));
    } else {
      const word = words[index];
      if (word === undefined) return null;
      operands.push(word);
    }
  }
  const variadic = command.arguments.at(-1)?.name.endsWith("...>") === true;
  if (!variadic && words.length > command.arguments.length) return null;
  return { command, operands, options, globals: globals as GivenGlobals };
}
