/** A chat-cli command as gh declares one: its arguments and flags beside its run function, the run's input type derived from them. */
import type { CliContext } from "./context.js";

/** One flag: commander's flags string (`--json`, `--limit <n>`, `--no-browser`), its help, and how its value is read. */
export interface FlagSpec<T, Always extends boolean = boolean> {
  flags: string;
  description: string;
  /** Turns the typed value into the option's value; a refused value throws OptionValueError (exit 2). */
  parse?: (value: string) => T;
  defaultValue?: T;
  /** Type-level only: whether the value is always there (a default, or a negatable switch). */
  readonly always?: Always;
}

/** A positional: `<chatId>`, or `<prompt...>` for one or more words (joined by spaces). */
export interface ArgumentSpec {
  name: string;
  description?: string;
}

export type Flags = Record<string, FlagSpec<unknown>>;
export type Arguments = Record<string, ArgumentSpec>;

/** A switch (`--all`): true when given. */
export function switchFlag(flags: string, description: string): FlagSpec<boolean, false> {
  return { flags, description };
}

/** A `--no-x` switch: true unless given. */
export function negatedSwitch(flags: `--no-${string}`, description: string): FlagSpec<boolean, true> {
  return { flags, description };
}

/** A flag with a value (`--title <title>`), as typed, or read by `parse`. */
export function valueFlag(flags: string, description: string): FlagSpec<string, false>;
export function valueFlag<T>(
  flags: string,
  description: string,
  parse: (value: string) => T,
): FlagSpec<T, false>;
export function valueFlag<T>(
  flags: string,
  description: string,
  parse?: (value: string) => T,
): FlagSpec<T | string, false> {
  return parse ? { flags, description, parse } : { flags, description };
}

/** The same flag, with the value it has when not given. */
export function withDefault<T>(flag: FlagSpec<T, false>, defaultValue: T): FlagSpec<T, true> {
  return {
    flags: flag.flags,
    description: flag.description,
    ...(flag.parse ? { parse: flag.parse } : {}),
    defaultValue,
  };
}

type ValueOf<F> = F extends FlagSpec<infer T, boolean> ? T : never;
type AlwaysKeys<F extends Flags> = {
  [K in keyof F]: F[K] extends FlagSpec<unknown, true> ? K : never;
}[keyof F];

/** The values of a command's flags: optional unless the flag always has one. */
export type FlagValues<F extends Flags> = { [K in AlwaysKeys<F>]: ValueOf<F[K]> } & {
  [K in Exclude<keyof F, AlwaysKeys<F>>]?: ValueOf<F[K]>;
};

/** The values of a command's positionals, each one string (a variadic's words joined). */
export type ArgumentValues<A extends Arguments> = { [K in keyof A]: string };

/** What a command's run function receives besides the context. */
export type CommandInput<A extends Arguments, F extends Flags> = ArgumentValues<A> & FlagValues<F>;

/** A command's positionals, flags and run function; its name, summary and usage line live in commands/index.ts. */
export interface CommandDefinition<A extends Arguments = Arguments, F extends Flags = Flags> {
  arguments: A;
  options: F;
  run(input: CommandInput<A, F>, ctx: CliContext): Promise<void>;
}

/** Keeps the types of the arguments and flags, so `run`'s input is derived from them. */
export function defineCommand<A extends Arguments, F extends Flags>(
  definition: CommandDefinition<A, F>,
): CommandDefinition<A, F> {
  return definition;
}

/** The chat ID positional most commands take. */
export const chatIdArgument: ArgumentSpec = {
  name: "<chatId>",
  description: "the chat's ID (chat_…, shown by `chat-cli list`)",
};
