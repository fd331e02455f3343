/** Tiny ANSI styling for chat-cli: colour only when enabled (a TTY, no NO_COLOR, no --no-color). */

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
