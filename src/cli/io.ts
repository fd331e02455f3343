/** The terminal chat-cli talks to: writers, TTY facts, colour, a yes/no prompt, a spinner and the browser; injectable for tests. */
import { sanitizeForTerminal } from "../internal/redact.js";
import { CliError, EXIT } from "./errors.js";

export interface Spinner {
  stop(): void;
}

export interface CliIo {
  /** Data: the only thing scripts read. */
  stdout(text: string): void;
  /** Hints, progress, prompts and errors. */
  stderr(text: string): void;
  /** stdout is a terminal: tables and summaries instead of plain text. */
  isTTY: boolean;
  /** stdin and stderr are terminals: the user can be asked questions. */
  interactive: boolean;
  /** Colour on stdout. */
  color: boolean;
  /** Colour on stderr. */
  errColor: boolean;
  /** Asks a question on stderr and resolves to the answer line ("" on end of input); Ctrl-C rejects (exit 130). */
  prompt(question: string): Promise<string>;
  /** A progress spinner on stderr; does nothing unless stderr is a terminal. */
  spinner(label: string): Spinner;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** The real process streams. `colorFlag` is false after `--no-color`. */
export function processIo(colorFlag = true, env: Record<string, string | undefined> = process.env): CliIo {
  // `chat-cli list | head -1` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
  const stdoutTTY = process.stdout.isTTY === true;
  const stderrTTY = process.stderr.isTTY === true;
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTTY: stdoutTTY,
    interactive: process.stdin.isTTY === true && stderrTTY,
    color: colorAllowed(stdoutTTY, colorFlag, env),
    errColor: colorAllowed(stderrTTY, colorFlag, env),
    prompt: (question) => askLine(question),
    spinner: (label) => (stderrTTY ? startSpinner(label) : { stop() {} }),
  };
}

async function askLine(question: string): Promise<string> {
  const { createInterface } = await import("node:readline");
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve, reject) => {
    let answered = false;
    rl.on("close", () => {
      if (!answered) resolve("");
    });
    // Ctrl-C at the prompt is an interruption (exit 130), not an answer.
    rl.on("SIGINT", () => {
      answered = true;
      process.stderr.write("\n");
      rl.close();
      reject(new CliError("interrupted at the prompt; nothing was sent.", EXIT.interrupted));
    });
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
  });
}

/** After this long a spinner also shows how long the wait has lasted (the assistant can take minutes). */
const SHOW_ELAPSED_AFTER_MS = 3000;

function startSpinner(label: string): Spinner {
  let frame = 0;
  const started = Date.now();
  const draw = () => {
    const elapsed = Date.now() - started;
    const suffix = elapsed >= SHOW_ELAPSED_AFTER_MS ? ` ${formatElapsed(elapsed)}` : "";
    process.stderr.write(`\r${FRAMES[frame % FRAMES.length]} ${label}${suffix}`);
    frame += 1;
  };
  // Only show the spinner when the wait lasts more than a moment.
  let timer: NodeJS.Timeout | undefined;
  const delay = setTimeout(() => {
    draw();
    timer = setInterval(draw, 80);
  }, 250);
  return {
    stop() {
      clearTimeout(delay);
      if (timer) {
        clearInterval(timer);
        process.stderr.write("\r\u001b[2K");
      }
    },
  };
}

/** "7s", "2m 05s". */
export function formatElapsed(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return seconds < 60
    ? `${seconds}s`
    : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`;
}

/** True for a "yes" answer; anything else (including an empty line) is No. */
export function isYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

function wrap(open: number, close: number, enabled: boolean): (text: string) => string {
  return enabled ? (text) => `\u001b[${open}m${text}\u001b[${close}m` : (text) => text;
}

export function createStyle(enabled: boolean): Style {
  return {
    bold: wrap(1, 22, enabled),
    dim: wrap(2, 22, enabled),
    red: wrap(31, 39, enabled),
    green: wrap(32, 39, enabled),
    yellow: wrap(33, 39, enabled),
    cyan: wrap(36, 39, enabled),
  };
}

/**
 * Colour: never with `--no-color` or `NO_COLOR` (any non-empty value); else always with `FORCE_COLOR` (any value but
 * "0" or "false") or `CLICOLOR_FORCE` (any value but "0"), as a CI log or a pager asks; else on a TTY.
 */
export function colorAllowed(
  isTTY: boolean,
  colorFlag: boolean,
  env: Record<string, string | undefined> = process.env,
): boolean {
  if (!colorFlag || env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== "0" && force !== "false") return true;
  const clicolor = env.CLICOLOR_FORCE;
  if (clicolor !== undefined && clicolor !== "" && clicolor !== "0") return true;
  return isTTY;
}

/** Removes ANSI escapes, e.g. to measure the visible width of a table cell. */
export function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}

/** How long an opener has to fail (xdg-open with no browser exits within milliseconds) before it counts as opened. */
const OPENER_CONFIRM_MS = 1500;

/**
 * Prints "Opening <url>" on stderr and hands an http(s) URL to the browser. When no browser could open it, fails
 * (exit 1) with the URL to open by hand: as gh does, a command asked to open something never reports false success.
 */
export async function openInBrowser(io: CliIo, url: string): Promise<void> {
  const protocol = URL.parse(url)?.protocol;
  if (protocol !== "http:" && protocol !== "https:")
    throw new CliError(`refusing to open ${JSON.stringify(url)}: not an http(s) URL`);
  io.stderr(`Opening ${sanitizeForTerminal(url, { oneLine: true })}\n`);
  const { openUrl } = await import("../auth/index.js");
  try {
    await openUrl(url, { confirmMs: OPENER_CONFIRM_MS });
  } catch (error) {
    throw new CliError(
      `could not open a browser: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.error,
      `Open the URL yourself: ${url}`,
      error,
    );
  }
}
