/** A chat-cli command as gh declares one: its arguments and flags beside its run function, the run's input type derived from them; and the parsers of the flags' values. */
import { MAX_TIMER_SECONDS, timerMilliseconds, timerSecondsRange } from "../internal/deadline.js";
import { portNumber } from "../internal/port.js";
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
  return { ...flag, defaultValue } as FlagSpec<T, true>;
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

/** A command's positionals, flags and run function; its name, summary and usage line live in program.ts (COMMANDS). */
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

/** A flag value the option's parser refused; commander reports it as its own InvalidArgumentError. */
export class OptionValueError extends Error {
  override readonly name = "OptionValueError";
}

export function parseLimit(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > 100) {
    throw new OptionValueError("must be a whole number from 1 to 100.");
  }
  return limit;
}

/** `--auth-timeout <seconds>`, in milliseconds. */
export function parseAuthTimeout(value: string): number {
  const ms = timerMilliseconds(value);
  if (ms === undefined) throw new OptionValueError(`must be ${timerSecondsRange()}.`);
  return ms;
}

const TOKEN_STORES = ["auto", "keychain", "file"] as const;

export function parseTokenStore(value: string): (typeof TOKEN_STORES)[number] {
  const store = TOKEN_STORES.find((name) => name === value);
  if (!store) throw new OptionValueError("must be auto, keychain or file.");
  return store;
}

export function parsePort(value: string): number {
  const port = portNumber(value, { allowZero: true });
  if (port === undefined) throw new OptionValueError("must be a port number from 0 to 65535.");
  return port;
}

export function parseMilliseconds(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > MAX_TIMER_SECONDS * 1000)
    throw new OptionValueError(
      `must be a whole number of milliseconds, at most ${MAX_TIMER_SECONDS * 1000} (a day).`,
    );
  return Number(value);
}

export function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1 || seconds > 86_400) {
    throw new OptionValueError("must be a whole number of seconds from 1 to 86400.");
  }
  return seconds;
}

export function parseMcpEra(value: string): "both" | "modern" | "legacy" {
  if (value !== "both" && value !== "modern" && value !== "legacy") {
    throw new OptionValueError("must be both, modern or legacy.");
  }
  return value;
}

export function parseDpopMode(value: string): "off" | "allowed" | "required" {
  if (value !== "off" && value !== "allowed" && value !== "required") {
    throw new OptionValueError("must be off, allowed or required.");
  }
  return value;
}

export function parseNames(value: string): string[] {
  const names = value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (names.length === 0) throw new OptionValueError("give the integration names, comma-separated.");
  return names;
}

export function parseBaseUrl(value: string): string {
  const protocol = URL.parse(value)?.protocol;
  if (protocol !== "http:" && protocol !== "https:")
    throw new OptionValueError("must be an http(s) URL, e.g. http://127.0.0.1:8787.");
  return value.replace(/\/+$/, "");
}

/** `--limit <n>` of the commands that list. */
export const limitFlag = valueFlag("--limit <n>", "page size, 1-100 (default 20)", parseLimit);

// What is wrong with one field of a JSON value a flag gave, as a sentence that names the field: never zod's own wording.

/** The parts of a zod issue the sentence is made from. */
export interface FieldIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: unknown;
  keys?: string[];
  values?: unknown[];
  minimum?: unknown;
  maximum?: unknown;
  origin?: unknown;
  format?: unknown;
}

/** `"a.0.b"`, or `whole` when the issue is about the value itself. */
export function fieldName(issue: FieldIssue | undefined, whole: string): string {
  return issue?.path.length ? `"${issue.path.map(String).join(".")}"` : whole;
}

/** The value at the issue's path in `value`, or undefined when any step is absent. */
function at(value: unknown, path: PropertyKey[]): unknown {
  let current = value;
  for (const step of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[step];
  }
  return current;
}

const article = (word: string) => `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;

/** What is wrong, after the field's name: "is missing", "must be a string", "must not be empty", ... */
export function fieldProblem(issue: FieldIssue | undefined, value: unknown): string {
  if (!issue) return "is not valid";
  const bound = (limit: unknown, word: string) => {
    const unit = issue.origin === "string" ? "characters" : issue.origin === "array" ? "entries" : "";
    return `must ${unit ? "have" : "be"} ${word} ${String(limit)}${unit ? ` ${unit}` : ""}`;
  };
  switch (issue.code) {
    case "invalid_type":
      if (issue.path.length > 0 && at(value, issue.path) === undefined) return "is missing";
      return typeof issue.expected === "string" ? `must be ${article(issue.expected)}` : "has the wrong type";
    case "unrecognized_keys":
      return `has a field it does not know: ${(issue.keys ?? []).map((key) => `"${key}"`).join(", ")}`;
    case "too_small":
      return issue.minimum === 1 && issue.origin !== "number"
        ? "must not be empty"
        : bound(issue.minimum, "at least");
    case "too_big":
      return bound(issue.maximum, "at most");
    case "invalid_value":
      return `must be one of ${(issue.values ?? []).map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_format":
      return typeof issue.format === "string" ? `must be ${article(issue.format)}` : "is not valid";
    // A refinement's message is chat-cli's own sentence.
    case "custom":
      return issue.message;
    default:
      return "is not valid";
  }
}
