/** The one browser opener of the package: http(s) URLs only, `$BROWSER` run without a shell (POSIX shell words, or Windows paths with `.cmd`/`.bat` through cmd.exe), else the `open` package. */
import { type ChildProcess, spawn } from "node:child_process";
import { statSync } from "node:fs";
import { win32 } from "node:path";
import { environmentWithoutSecrets, redactForTerminal, secretVariablesIn } from "../internal/redact.js";
import { checkShownUrl } from "./shown-url.js";

/** Parses `url` and refuses anything a browser should not be handed (the one check of `shown-url.ts`). */
export function assertBrowsableUrl(url: string): URL {
  return new URL(checkShownUrl(url, "URL to open").href);
}

/**
 * Opens `url` in the user's browser. `$BROWSER`, when set, is run directly (never through a shell) with the URL
 * as its last argument, as gh and xdg-open do; otherwise the `open` package picks the platform's opener.
 * Resolves once the opener has started (and, with `confirmMs`, has not failed within that time); rejects when the
 * URL is refused or no opener could be started.
 * The browser never inherits this package's secrets (API key, client secret, variables `--header` names).
 */
export async function openUrl(
  url: string,
  opts: {
    env?: NodeJS.ProcessEnv;
    /** Also wait up to this long for the opener to fail (a non-zero exit: no browser, no display) before resolving. */
    confirmMs?: number;
    /** Another platform's rules for `$BROWSER` (tests), and the spawn that starts it. */
    platform?: Omit<BrowserPlatform, "env">;
    spawnOpener?: typeof spawn;
    /** Told when the opener exits (whenever that is, while this process runs). */
    onExit?: () => void;
  } = {},
): Promise<void> {
  const href = assertBrowsableUrl(url).href;
  const env = environmentWithoutSecrets(opts.env ?? process.env);
  const browser = env.BROWSER?.trim();
  let opener: { child: ChildProcess; said: () => string; what: string };
  if (browser) {
    const invocation = browserInvocation(browser, href, { ...opts.platform, env });
    const started = await spawnDetached(invocation, env, opts.spawnOpener ?? spawn);
    opener = { ...started, what: `the $BROWSER command (${invocation.command})` };
  } else {
    const { default: open } = await import("open");
    // `open` spawns with process.env and takes no environment: the secrets leave it while the opener starts.
    const hidden = secretVariablesIn(process.env).map((name) => [name, process.env[name]] as const);
    for (const [name] of hidden) delete process.env[name];
    try {
      opener = { child: await open(href, { wait: false }), said: () => "", what: "the system's URL opener" };
    } finally {
      for (const [name, value] of hidden) process.env[name] = value;
    }
    opener.child.on("error", () => {});
  }
  if (opts.onExit) opener.child.once("exit", opts.onExit);
  if (opts.confirmMs) await notFailedWithin(opener.child, opts.confirmMs, opener.what, opener.said);
}

/**
 * Openers such as xdg-open exit at once, with a non-zero code when they found no browser; some stay until the
 * browser closes. A failure within `ms` rejects (with the first line the opener wrote on stderr); an exit 0 or a
 * process still running resolves.
 */
function notFailedWithin(child: ChildProcess, ms: number, what: string, said: () => string): Promise<void> {
  if (child.exitCode !== null)
    return child.exitCode === 0 ? Promise.resolve() : Promise.reject(failed(child.exitCode));
  return new Promise((resolve, reject) => {
    // Not unref'd: the opener is, so this timer keeps the process up to hear its exit.
    const timer = setTimeout(done, ms);
    child.once("exit", (code) => {
      clearTimeout(timer);
      // Its last words may still be in the pipe; a program it started may hold the pipe open, so not for long.
      const stderr = child.stderr;
      if (code === 0 || !stderr || stderr.readableEnded) return done(code);
      const late = setTimeout(() => done(code), 200);
      stderr.once("end", () => {
        clearTimeout(late);
        done(code);
      });
    });
    function done(code?: number | null) {
      clearTimeout(timer);
      if (code === undefined || code === 0) resolve();
      else reject(failed(code));
    }
  });
  function failed(code: number | null): Error {
    const line = said();
    return new Error(
      `${what} found no browser to open it (exit ${code ?? "by signal"}${line ? `: ${line}` : ""})`,
    );
  }
}

/** The most of an opener's stderr kept, for the one line a failure quotes. */
const OPENER_STDERR_BYTES = 1024;

/**
 * Runs the opener with no terminal output of its own: stdout may be a protocol stream (the bridge) and its
 * progress meters and warnings are noise on stderr. Its stderr is read (and drained, so a browser that keeps
 * writing never blocks) and its first line kept, sanitised, for the message when it fails.
 */
function spawnDetached(
  { command, args, windowsVerbatimArguments }: BrowserInvocation,
  env: NodeJS.ProcessEnv,
  start: typeof spawn,
): Promise<{ child: ChildProcess; said: () => string }> {
  return new Promise((resolve, reject) => {
    const child = start(command, args, {
      shell: false,
      stdio: ["ignore", "ignore", "pipe"],
      env,
      ...(windowsVerbatimArguments ? { windowsVerbatimArguments } : {}),
    });
    let kept = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      if (kept.length < OPENER_STDERR_BYTES) kept += chunk.slice(0, OPENER_STDERR_BYTES - kept.length);
    });
    child.stderr?.on("error", () => {});
    const said = () => {
      const line = kept.split(/\r?\n/).find((text) => text.trim() !== "") ?? "";
      return redactForTerminal(line.trim()).slice(0, 200);
    };
    child.once("error", (error) =>
      reject(new Error(`Could not start the browser command from $BROWSER (${command}): ${error.message}`)),
    );
    child.once("spawn", () => {
      child.unref();
      // The pipe would keep this process up as long as a long-lived browser runs.
      (child.stderr as { unref?: () => void } | null)?.unref?.();
      resolve({ child, said });
    });
  });
}

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
