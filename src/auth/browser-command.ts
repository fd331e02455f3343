/** How `$BROWSER` becomes a process on each platform: POSIX shell words, or Windows paths with `.cmd`/`.bat` through cmd.exe. */
import { statSync } from "node:fs";
import { win32 } from "node:path";

/** What to spawn (always with `shell: false`). */
export interface BrowserInvocation {
  command: string;
  args: string[];
  /** cmd.exe reads its command line itself: Node must pass the quoting below untouched. */
  windowsVerbatimArguments?: boolean;
}

export interface BrowserPlatform {
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
  /** True when `path` is a file (a seam for tests of another platform's paths). */
  isFile?: (path: string) => boolean;
}

/**
 * Splits `$BROWSER` into words. POSIX: as a shell would, quotes and backslashes included, without any expansion
 * (no variables, globs, tildes, command substitution or operators). Windows: as Windows users write commands,
 * backslashes are path separators, double quotes group (`""` inside them is one quote), single quotes are letters.
 */
export function splitCommandWords(command: string, platform: NodeJS.Platform = process.platform): string[] {
  return platform === "win32" ? splitWindowsWords(command) : splitPosixWords(command);
}

function splitPosixWords(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < command.length; i++) {
    const char = command[i]!;
    if (quote === "'") {
      if (char === "'") quote = null;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = null;
      else if (char === "\\" && i + 1 < command.length && '$`"\\\n'.includes(command[i + 1]!))
        word += command[++i];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === "\\" && i + 1 < command.length) {
      word += command[++i];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote) throw unterminated(quote);
  if (inWord) words.push(word);
  return words;
}

function splitWindowsWords(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < command.length; i++) {
    const char = command[i]!;
    if (quoted) {
      if (char !== '"') word += char;
      else if (command[i + 1] === '"') word += command[++i];
      else quoted = false;
    } else if (char === '"') {
      quoted = true;
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quoted) throw unterminated('"');
  if (inWord) words.push(word);
  return words;
}

const unterminated = (quote: string) =>
  new Error(`$BROWSER has an unterminated ${quote} quote; fix the variable or unset it.`);

/** The process that opens `href` with the `$BROWSER` command `browser`, the URL as its last argument. */
export function browserInvocation(
  browser: string,
  href: string,
  { platform = process.platform, env = process.env, isFile = isFileOnDisk }: BrowserPlatform = {},
): BrowserInvocation {
  if (platform !== "win32") {
    const [command, ...args] = splitCommandWords(browser, platform);
    if (!command) throw noCommand();
    return { command, args: [...args, href] };
  }
  // `C:\Program Files\Browser\browser.exe` left unquoted is still one path, when it names a file.
  const [command, ...args] = isFile(browser) ? [browser] : splitCommandWords(browser, platform);
  if (!command) throw noCommand();
  const resolved = resolveWindowsCommand(command, env, isFile);
  if (!/\.(cmd|bat)$/i.test(resolved)) return { command: resolved, args: [...args, href] };
  // Node refuses to spawn batch files without a shell (EINVAL since the 2024 security releases): cmd.exe runs them,
  // with every word escaped so that `&`, `|`, `^`, `%` and quotes in the URL or the arguments stay letters.
  const line = [escapeCmdWord(resolved), ...[...args, href].map(escapeCmdArgument)].join(" ");
  return {
    command: env.ComSpec || env.COMSPEC || "cmd.exe",
    args: ["/d", "/s", "/c", `"${line}"`],
    windowsVerbatimArguments: true,
  };
}

const noCommand = () => new Error("$BROWSER is set but names no command; unset it or point it at a browser.");

// cmd.exe's metacharacters; each gets a caret. A caret inside `%NAME%` also breaks the variable's name, so cmd
// leaves it as written instead of expanding it (the technique of cross-spawn, which npm and execa rely on).
const CMD_METACHARACTERS = /([()\][%!^"`<>&|;, *?])/g;

function escapeCmdWord(word: string): string {
  return word.replace(CMD_METACHARACTERS, "^$1");
}

/** One argument for a program started by cmd.exe: quoted for the program's argv parser, then escaped for cmd. */
function escapeCmdArgument(argument: string): string {
  const quoted = `"${argument.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\*)$/, "$1$1")}"`;
  return quoted.replace(CMD_METACHARACTERS, "^$1");
}

/**
 * The file Windows would run for `command`: a bare name searched on `%PATH%`, each `%PATHEXT%` extension tried
 * when the name has none (so `code` finds `code.cmd`), as cmd.exe does. Unresolved, the name is returned as given.
 */
export function resolveWindowsCommand(
  command: string,
  env: NodeJS.ProcessEnv,
  isFile: (path: string) => boolean = isFileOnDisk,
): string {
  const extensions = (env.PATHEXT || env.Pathext || ".COM;.EXE;.BAT;.CMD")
    .split(";")
    .filter((ext) => ext.startsWith("."));
  const hasExtension = win32.extname(command) !== "";
  const candidates = (base: string) =>
    hasExtension ? [base] : extensions.map((ext) => `${base}${ext.toLowerCase()}`);
  const hasDirectory = /[\\/]/.test(command) || /^[a-z]:/i.test(command);
  const bases = hasDirectory
    ? [command]
    : [
        command,
        ...(env.PATH || env.Path || "")
          .split(";")
          .filter(Boolean)
          .map((dir) => win32.join(dir, command)),
      ];
  for (const base of bases) {
    for (const candidate of candidates(base)) if (isFile(candidate)) return candidate;
  }
  return command;
}

function isFileOnDisk(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
