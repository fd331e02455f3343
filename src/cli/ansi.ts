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

/** Colour is allowed on a TTY unless `NO_COLOR` is set (any non-empty value) or `--no-color` was given. */
export function colorAllowed(
  isTTY: boolean,
  colorFlag: boolean,
  env: Record<string, string | undefined> = process.env,
): boolean {
  return isTTY && colorFlag && !env.NO_COLOR;
}

/** Removes ANSI escapes, e.g. to measure the visible width of a table cell. */
export function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}
