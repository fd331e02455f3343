/** ChatClient's log: a `logger` with debug/info/warn/error at a `logLevel`; lines name requests, never credentials or bodies. */
import { redact } from "../internal/redact.js";

/** Where ChatClient writes its log lines (`console` by default; pino, winston and the like fit). */
export interface Logger {
  debug(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

export type LogLevel = "off" | "error" | "warn" | "info" | "debug";

const RANK: Record<LogLevel, number> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 };

export const DEFAULT_LOG_LEVEL: LogLevel = "warn";

function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && Object.hasOwn(RANK, value);
}

/** The lines a client writes, each passed through the redactor once more before the logger sees it. */
export class ClientLog {
  readonly level: LogLevel;
  readonly #logger: Logger;

  /** `level`, else `$CHAT_LOG`, else "warn"; a `$CHAT_LOG` that is no level is said once, at warn. */
  constructor(logger: Logger | undefined, level: LogLevel | undefined, env: string | undefined) {
    this.#logger = logger ?? console;
    if (level !== undefined && !isLogLevel(level))
      throw new TypeError(
        `ChatClient: logLevel ${JSON.stringify(level)} is not one of off, error, warn, info, debug`,
      );
    const fromEnv = env?.trim().toLowerCase();
    this.level = level ?? (isLogLevel(fromEnv) ? fromEnv : DEFAULT_LOG_LEVEL);
    if (level === undefined && fromEnv && !isLogLevel(fromEnv))
      this.warn(
        `CHAT_LOG=${JSON.stringify(env)} is not a log level (off, error, warn, info, debug); using warn`,
      );
  }

  enabled(level: Exclude<LogLevel, "off">): boolean {
    return RANK[this.level] >= RANK[level];
  }

  readonly debug = (line: string) => this.#write("debug", line);
  readonly info = (line: string) => this.#write("info", line);
  readonly warn = (line: string) => this.#write("warn", line);
  readonly error = (line: string) => this.#write("error", line);

  #write(level: Exclude<LogLevel, "off">, line: string): void {
    if (this.enabled(level)) this.#logger[level](redact(line));
  }
}

/**
 * A URL as the log shows it: scheme, host and path; user info dropped and query values elided (a topic is the
 * user's text, a cursor is opaque), the parameter names kept.
 */
export function loggedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "(unparsable URL)";
  }
  const names = [...new Set(parsed.searchParams.keys())];
  const query = names.length ? `?${names.map((name) => `${encodeURIComponent(name)}=…`).join("&")}` : "";
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}${query}`;
}

/** What a failed attempt is called in the log: the error's code or name, never its message (it may quote a URL). */
export function loggedFailure(error: unknown): string {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Z0-9_]{2,40}$/.test(code)) return code;
  }
  return error instanceof Error ? error.name : "failure";
}
