/** What every command receives: the terminal, the global options, the ChatClient built from them, and the wait for the assistant. */
import { type RestToken, resolveRestToken } from "../auth/rest-token.js";
import type { ChatClient, ClientTestOptions } from "../client/client.js";
import type { Logger } from "../client/logger.js";
import type { PagePromise } from "../client/pagination.js";
import { describeProxyFor } from "../internal/proxy.js";
import { rememberSecret, sanitizeForTerminal } from "../internal/redact.js";
import type { ListPage } from "../wire/index.js";
import { CliError, EXIT, UsageError } from "./errors.js";
import type { CliIo } from "./io.js";

export interface GlobalOptions {
  baseUrl: string;
  /** `--token`; wins over `$CHAT_API_KEY` and the stored login. */
  token?: string;
  json: boolean;
  color: boolean;
  debug: boolean;
  /** `--timeout <seconds>`: the most one request waits, the assistant's replies included. */
  timeoutSeconds?: number;
}

/** The global options as commander parsed them; absent ones take their defaults. */
export type GivenGlobals = Partial<Omit<GlobalOptions, "timeoutSeconds">> & { timeout?: number };

export function globalOptionsFrom(given: GivenGlobals, defaultBaseUrl: () => string): GlobalOptions {
  return {
    baseUrl: given.baseUrl ?? defaultBaseUrl(),
    ...(given.token !== undefined ? { token: given.token } : {}),
    json: given.json === true,
    color: given.color !== false,
    debug: given.debug === true,
    ...(given.timeout !== undefined ? { timeoutSeconds: given.timeout } : {}),
  };
}

export interface CliContext {
  io: CliIo;
  globals: GlobalOptions;
  env?: Record<string, string | undefined>;
  /** The fetch every request of this run goes through (tests pass the reference server's handler); default the global one. */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Where Ctrl-C arrives (`SIGINT`); default the process. Tests pass an emitter to interrupt a run in-process. */
  signals?: InterruptSource;
  /** What `login --with-token` reads the key from; default the process's stdin. */
  stdin?: AsyncIterable<string | Uint8Array>;
  /** The program's commands and flags, every command declared (`chat-cli completion`'s input; run.ts gives it). */
  commandTable?: () => Promise<CompletionTable>;
}

/** One flag of the program, as a completion script offers it. */
export interface Flag {
  long: string;
  short?: string;
  takesValue: boolean;
  description: string;
}
export interface CommandWords {
  name: string;
  description: string;
  flags: Flag[];
}
/** What a completion script offers: the global flags, and each command with its own. */
export interface CompletionTable {
  globals: Flag[];
  commands: CommandWords[];
}

/** The part of `process` a command listens on for Ctrl-C. */
export interface InterruptSource {
  once(event: "SIGINT", listener: () => void): unknown;
  off(event: "SIGINT", listener: () => void): unknown;
}

/** The token by the one precedence (`resolveRestToken`): `--token`, then `$CHAT_API_KEY`, then the `chat-cli login` credentials. */
export async function resolveToken(ctx: CliContext): Promise<RestToken | undefined> {
  const resolved = await resolveRestToken(ctx.globals.baseUrl, {
    token: ctx.globals.token,
    env: ctx.env ?? process.env,
    ...(ctx.fetch ? { fetch: ctx.fetch as typeof fetch } : {}),
  });
  // Whatever the source, the token is redacted from every message this process shows.
  rememberSecret(resolved?.token);
  return resolved;
}

export const SIGN_IN_HINT = "Run `chat-cli login`, set CHAT_API_KEY, or pass --token.";

/** A ChatClient for the base URL and token in effect (resolved here unless given); exit 4 when there is no token at all. */
export async function openClient(ctx: CliContext, token?: RestToken): Promise<ChatClient> {
  assertBaseUrl(ctx.globals.baseUrl);
  const resolved = token ?? (await resolveToken(ctx));
  if (!resolved) return notSignedIn(ctx);
  if (ctx.globals.debug) {
    const route = describeProxyFor(ctx.globals.baseUrl, ctx.env ?? process.env);
    ctx.io.stderr(`debug: requests to ${ctx.globals.baseUrl} go ${route}\n`);
  }
  const seconds = ctx.globals.timeoutSeconds;
  return newClient(ctx, {
    token: resolved.token,
    ...(seconds !== undefined ? { timeoutMs: seconds * 1000, waitTimeoutMs: seconds * 1000 } : {}),
  });
}

/** A ChatClient for the base URL, its log on stderr (every request at --debug; else $CHAT_LOG, else warnings). */
async function newClient(ctx: CliContext, options: ClientTestOptions): Promise<ChatClient> {
  // ky (whose import builds a Request to detect features) and the client load only for a command that sends one.
  const { ChatClient: Client } = await import("../client/client.js");
  return new Client({
    baseUrl: ctx.globals.baseUrl,
    ...(ctx.fetch ? { fetch: ctx.fetch } : {}),
    logger: stderrLogger(ctx.io),
    ...(ctx.globals.debug ? { logLevel: "debug" as const } : {}),
    ...options,
  } as ClientTestOptions);
}

/** The client's log on stderr, one line each, made safe for a terminal (a server's request id is outside text). */
export function stderrLogger(io: CliIo): Logger {
  const line = (level: string) => (message: string) =>
    io.stderr(`${level}: ${sanitizeForTerminal(message, { oneLine: true })}\n`);
  return { debug: line("debug"), info: line("info"), warn: line("warning"), error: line("error") };
}

/**
 * No token at all: exit 4, unless the server cannot be reached, the first thing to fix. One unauthenticated
 * request tells the two apart: any HTTP answer means reachable; a connection failure is thrown as it is.
 */
export async function notSignedIn(ctx: CliContext): Promise<never> {
  const { ChatConnectionError } = await import("../client/errors.js");
  const probe = await newClient(ctx, { maxRetries: 0, timeoutMs: REACHABLE_TIMEOUT_MS });
  try {
    await probe.listChats({ limit: 1 });
  } catch (error) {
    if (error instanceof ChatConnectionError) throw error;
  }
  throw new CliError(`not signed in to ${ctx.globals.baseUrl}`, EXIT.auth, SIGN_IN_HINT);
}

/** How long the no-token reachability check waits for any answer. */
const REACHABLE_TIMEOUT_MS = 10_000;

/** `abcd…wxyz`: enough to tell tokens apart, never enough to use one. */
export function maskToken(token: string): string {
  if (token.length < 12) return "…".padStart(Math.min(token.length, 4) + 1, "*");
  return `${token.slice(0, 4)}…${token.slice(-4)}`;
}

/** The service's base URL, not one of its endpoints: `/v2` and `/mcp` URLs are refused with the URL to use instead. */
export function assertBaseUrl(baseUrl: string): void {
  const endpoint = /\/(v2|mcp)\/*$/.exec(baseUrl)?.[1];
  if (!endpoint) return;
  const base = baseUrl.replace(/\/(v2|mcp)\/*$/, "");
  const why = endpoint === "v2" ? "chat-cli adds /v2 itself" : "that is the MCP endpoint, for MCP clients";
  throw new UsageError(
    `the base URL ${baseUrl} ends in /${endpoint}: ${why}`,
    `Use ${base} instead (in CHAT_API_URL or --base-url).`,
  );
}

/** `work`, or a CliError (`interrupted()`, exit 130) as soon as Ctrl-C arrives on the run's signals. */
export async function untilInterrupted<T>(
  ctx: CliContext,
  work: Promise<T>,
  interrupted: () => CliError,
): Promise<T> {
  const signals = ctx.signals ?? process;
  let onInterrupt: (() => void) | undefined;
  const interruption = new Promise<never>((_resolve, reject) => {
    onInterrupt = () => reject(interrupted());
    signals.once("SIGINT", onInterrupt);
  });
  try {
    return await Promise.race([work, interruption]);
  } finally {
    if (onInterrupt) signals.off("SIGINT", onInterrupt);
  }
}

/**
 * Runs `request` (a create, send or resolve) under a spinner on a terminal, not with `--json`. Ctrl-C exits 130 at
 * once and says the POST may still complete, and that `checkCommand` shows it only once the assistant has answered
 * (a user who trusted an empty answer there would send it twice).
 */
export async function waitForAssistant<T>(
  ctx: CliContext,
  wait: { label: string; checkCommand: string },
  request: () => Promise<T>,
): Promise<T> {
  const spinner = ctx.io.isTTY && !ctx.globals.json ? ctx.io.spinner(wait.label) : { stop() {} };
  try {
    return await untilInterrupted(
      ctx,
      request(),
      () =>
        new CliError(
          "interrupted while waiting for the assistant; the request was sent and may still complete for a while.",
          EXIT.interrupted,
          `\`${wait.checkCommand}\` shows it only once the assistant has answered, which can take minutes: look there before you run this again.`,
        ),
    );
  } finally {
    spinner.stop();
  }
}

/** The first page in the wire shape, or with `all` the items of every page in one (`nextCursor` null). */
export async function listPage<T>(pages: PagePromise<T>, all: boolean | undefined): Promise<ListPage<T>> {
  if (!all) return (await pages).toJSON();
  const data: T[] = [];
  for await (const item of pages) data.push(item);
  return { object: "list", data, nextCursor: null };
}
