/** `chat-cli completion <bash|zsh|fish>`: a completion script for that shell, generated from the program's own command table. */
import { UsageError } from "../../internal/usage-error.js";
import type { CliContext, CompletionTable, Flag } from "../context.js";
import { defineCommand } from "../define-command.js";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

/** A POSIX single-quoted word (bash and zsh). */
function quoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A fish single-quoted word. */
function fishQuoted(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** The global flags a command's words include: all but help and version, which the command's own list has or lacks. */
const inherited = (table: CompletionTable) =>
  table.globals.filter((flag) => flag.long !== "--help" && flag.long !== "--version");
/** The commands completed by name; `completion` is completed with the shells besides. */
const others = (table: CompletionTable) => table.commands.filter((command) => command.name !== "completion");

const words = (flags: Flag[]) =>
  flags.flatMap((flag) => (flag.short ? [flag.short, flag.long] : [flag.long]));
const valueFlags = (flags: Flag[]) => words(flags.filter((flag) => flag.takesValue)).join("|");

function bash(table: CompletionTable): string {
  const globals = words(table.globals).join(" ");
  const common = words(inherited(table)).join(" ");
  const completionFlags = table.commands.find((command) => command.name === "completion")?.flags ?? [];
  const cases = others(table)
    .map(
      (command) => `    ${command.name}) words=${quoted(`${words(command.flags).join(" ")} ${common}`)} ;;`,
    )
    .join("\n");
  return `# chat-cli completion for bash: \`source <(chat-cli completion bash)\`, or save it where bash-completion looks.
_chat_cli() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd="" words i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case \${COMP_WORDS[i]} in
      ${valueFlags(table.globals)}) ((i++)) ;;
      -*) ;;
      *) cmd=\${COMP_WORDS[i]}; break ;;
    esac
  done
  case $cmd in
    "") if [[ $cur == -* ]]; then words=${quoted(globals)}; else words=${quoted(table.commands.map((c) => c.name).join(" "))}; fi ;;
${cases}
    completion) words=${quoted(`${SHELLS.join(" ")} ${words(completionFlags).join(" ")} ${common}`)} ;;
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _chat_cli chat-cli
`;
}

/** `--flag[description]` specs for zsh's compadd -d is overkill here: `_describe` takes `word:description` pairs. */
function zshPairs(entries: [word: string, description: string][]): string {
  return entries.map(([word, text]) => quoted(`${word.replace(/:/g, "\\:")}:${text}`)).join(" ");
}

function zsh(table: CompletionTable): string {
  const flagPairs = (flags: Flag[]) => zshPairs(flags.map((flag) => [flag.long, flag.description]));
  const cases = others(table)
    .map((command) => `    ${command.name}) flags=(${flagPairs(command.flags)} $common) ;;`)
    .join("\n");
  return `#compdef chat-cli
# chat-cli completion for zsh: \`source <(chat-cli completion zsh)\` after compinit, or save it as _chat-cli on $fpath.
_chat_cli() {
  local -a commands globals common flags
  local cmd="" i
  commands=(${zshPairs(table.commands.map((command) => [command.name, command.description]))})
  globals=(${flagPairs(table.globals)})
  common=(${flagPairs(inherited(table))})
  for ((i = 2; i < CURRENT; i++)); do
    case \${words[i]} in
      ${valueFlags(table.globals)}) ((i++)) ;;
      -*) ;;
      *) cmd=\${words[i]}; break ;;
    esac
  done
  case $cmd in
    "") if [[ \${words[CURRENT]} == -* ]]; then _describe option globals; else _describe command commands; fi; return ;;
${cases}
    completion) if [[ \${words[CURRENT]} != -* ]]; then compadd ${SHELLS.join(" ")}; return; fi; flags=($common) ;;
    *) _files; return ;;
  esac
  if [[ \${words[CURRENT]} == -* ]]; then _describe option flags; else _files; fi
}
if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then _chat_cli "$@"; else compdef _chat_cli chat-cli; fi
`;
}

function fish(table: CompletionTable): string {
  const flagLine = (flag: Flag, condition: string) =>
    [
      "complete -c chat-cli",
      condition,
      `-l ${flag.long.slice(2)}`,
      flag.short ? `-s ${flag.short.slice(1)}` : "",
      flag.takesValue ? "-r" : "",
      `-d ${fishQuoted(flag.description)}`,
    ]
      .filter(Boolean)
      .join(" ");
  const lines = [
    "# chat-cli completion for fish: save it as ~/.config/fish/completions/chat-cli.fish.",
    "complete -c chat-cli -f",
    ...table.globals.map((flag) => flagLine(flag, "")),
    ...table.commands.map(
      (command) =>
        `complete -c chat-cli -n __fish_use_subcommand -a ${command.name} -d ${fishQuoted(command.description)}`,
    ),
    ...table.commands.flatMap((command) =>
      command.flags
        .filter((flag) => flag.long !== "--help")
        .map((flag) => flagLine(flag, `-n '__fish_seen_subcommand_from ${command.name}'`)),
    ),
    "complete -c chat-cli -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'",
  ];
  return `${lines.join("\n")}\n`;
}

/** The completion script of `shell` for `table`. */
export function completionScript(shell: Shell, table: CompletionTable): string {
  return { bash, zsh, fish }[shell](table);
}

export async function completion(input: { shell: string }, ctx: CliContext): Promise<void> {
  const shell = SHELLS.find((name) => name === input.shell);
  if (!shell)
    throw new UsageError(
      `no completion for the shell ${JSON.stringify(input.shell)}; chat-cli completion knows bash, zsh and fish`,
    );
  if (!ctx.commandTable)
    throw new Error("chat-cli completion runs inside the program (run.ts gives its table)");
  ctx.io.stdout(completionScript(shell, await ctx.commandTable()));
}

export const completionCommand = defineCommand({
  arguments: { shell: { name: "<shell>", description: "bash, zsh or fish" } },
  options: {},
  run: completion,
});
