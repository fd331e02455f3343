/** Runs chat-cli once: parses argv, runs the command, and maps every failure to one message and an exit code. */
import { AuthRequiredError } from "../auth/errors.js";
import { checkShownUrl, type ShownUrl } from "../auth/shown-url.js";
import { ChatConnectionError, ChatTimeoutError } from "../client/errors.js";
import { defaultBaseUrl } from "../config/index.js";
import { describeNetworkFailure } from "../internal/network-errors.js";
import { redactForTerminal } from "../internal/redact.js";
import { classifyRequestFailure } from "../internal/request-failure.js";
import { isNotChatService } from "../internal/service-shape.js";
import { type CliContext, type GlobalOptions, SIGN_IN_HINT } from "./context.js";
import { CliError, EXIT, type ExitCode, serverMessage, statusOf, UsageError } from "./errors.js";
import { type CliIo, createStyle, isYes, openInBrowser, processIo } from "./io.js";
import { commandTable, runProgram } from "./program.js";

/** What a run touches besides argv, injectable as gh's IOStreams: tests pass fake streams, an env and a fetch. */
export interface RunSeams {
  env?: Record<string, string | undefined>;
  fetch?: CliContext["fetch"];
  signals?: CliContext["signals"];
  stdin?: CliContext["stdin"];
}

/** Runs the program on `argv` (without node and script) and resolves to the exit code. */
export async function run(argv: string[], ioOverride?: CliIo, seams: RunSeams = {}): Promise<ExitCode> {
  const io = ioOverride ?? processIo(!argv.includes("--no-color"));
  let globals: GlobalOptions | undefined;
  const contextFor = (parsed: GlobalOptions): CliContext => {
    globals = parsed;
    return {
      io,
      globals: parsed,
      ...(seams.env ? { env: seams.env } : {}),
      ...(seams.fetch ? { fetch: seams.fetch } : {}),
      ...(seams.signals ? { signals: seams.signals } : {}),
      ...(seams.stdin ? { stdin: seams.stdin } : {}),
      commandTable,
    };
  };
  const baseUrlDefault = () => defaultBaseUrl(seams.env ?? process.env);
  try {
    // commander parses every command line, and prints help, the version and usage errors itself.
    return await runProgram(argv, io, contextFor, baseUrlDefault);
  } catch (error) {
    const debug = globals?.debug ?? argv.includes("--debug");
    const code = await reportError(error, io, { debug, baseUrl: globals?.baseUrl ?? baseUrlDefault() });
    if (debug) printDebug(error, io);
    return code;
  }
}

interface ApiErrorShape {
  status?: number;
  code?: string;
  requestId?: string;
  reauthUrl?: string;
  body?: unknown;
}

/** Prints one error line (plus a hint line when there is something to do) and picks the exit code. */
export async function reportError(
  error: unknown,
  io: CliIo,
  { debug, baseUrl }: { debug: boolean; baseUrl: string },
): Promise<ExitCode> {
  const style = createStyle(io.errColor);
  const say = (message: string, hint?: string) => {
    const shown = redactForTerminal(message.trim().replace(/\s*\n\s*/g, " "));
    io.stderr(`${style.red("error:")} ${shown}\n`);
    if (hint) io.stderr(`${style.dim(redactForTerminal(hint))}\n`);
  };

  if (error instanceof CliError || error instanceof UsageError) {
    say(error.message, error.hint);
    return error.exitCode;
  }
  const api = (error ?? {}) as ApiErrorShape;
  const message = serverMessage(error);
  const status = statusOf(error);
  if (api.code === "sso_required" || api.reauthUrl) {
    say(`${withoutFieldNames(message)} (single sign-on required)`);
    const link = api.reauthUrl ? shownReauthUrl(api.reauthUrl, say) : undefined;
    if (link) {
      io.stderr(
        `Open this link in a browser, complete single sign-on at ${link.site}, then retry: ${redactForTerminal(link.href)}\n`,
      );
      if (io.interactive) {
        const answer = await io.prompt("Open it in your browser? [y/N] ").catch(() => "");
        if (isYes(answer)) {
          await openInBrowser(io, link.href).catch((e: unknown) => say(String((e as Error).message)));
        }
      }
    }
    return EXIT.auth;
  }
  if (status === 401) {
    say(`authentication needed for ${baseUrl}: ${message}`, SIGN_IN_HINT);
    return EXIT.auth;
  }
  if (status === 409) {
    say(
      `conflict: ${message}`,
      "The chat has moved on; see the latest request with `chat-cli pending <chatId>`.",
    );
    return EXIT.conflict;
  }
  if (status !== undefined && isNotChatService(error)) {
    say(
      message,
      "Check the base URL (--base-url or CHAT_API_URL): it is the service's address, without /v2.",
    );
    return EXIT.error;
  }
  if (status !== undefined) {
    say(
      `${message} (HTTP ${status}${api.code ? ` ${api.code}` : ""})`,
      debug ? undefined : hintForStatus(status),
    );
    return EXIT.error;
  }
  if (error instanceof ChatTimeoutError) {
    say(
      `${baseUrl} did not answer in time: ${message.replace(/pass a larger timeoutMs|Raise timeoutMs/, (m) => (m.startsWith("R") ? "Raise --timeout" : "pass a larger --timeout"))}`,
    );
    return EXIT.error;
  }
  const network = describeNetworkFailure(error, baseUrl);
  if (network) {
    say(network);
    return EXIT.error;
  }
  // Reached, but the answer was lost: the client's message says the request may have run (and its key).
  if (error instanceof ChatConnectionError && error.requestSent) {
    say(message);
    return EXIT.error;
  }
  // The same judgement for every command, login included: a server that cannot be reached is exit 1.
  const unreachable = describeUnreachable(error, baseUrl);
  if (unreachable) {
    say(unreachable.message, unreachable.hint);
    return EXIT.error;
  }
  if (error instanceof ChatConnectionError) {
    // The client's message already says what to check.
    say(`cannot reach ${baseUrl}: ${message}`);
    return EXIT.error;
  }
  if (error instanceof AuthRequiredError) {
    say(message, "Retry `chat-cli login`, or use an API key: set CHAT_API_KEY or pass --token.");
    return EXIT.auth;
  }
  say(message, debug ? undefined : "Run again with --debug for details.");
  return EXIT.error;
}

/** The service's sentences that tell an API client which field to read ("Open reauthUrl ..."): the link is printed instead. */
function withoutFieldNames(message: string): string {
  const kept = message.split(/(?<=\.)\s+/).filter((sentence) => !/\breauthUrl\b/.test(sentence));
  return kept.length > 0 ? kept.join(" ") : "single sign-on is required";
}

function hintForStatus(status: number): string | undefined {
  if (status === 429) return "Rate limited: wait a moment and retry.";
  if (status >= 500) return "The service failed; retry, or run with --debug for details.";
  return undefined;
}

/** --debug: the API details (status, code, request id, error body) and the stack, of the error and its causes. */
function printDebug(error: unknown, io: CliIo): void {
  for (
    let current = error, depth = 0;
    current instanceof Error && depth < 3;
    current = current.cause, depth += 1
  ) {
    const api = current as Error & ApiErrorShape;
    if (api.status !== undefined) {
      const details = { status: api.status, code: api.code, requestId: api.requestId, body: api.body };
      io.stderr(`debug: ${redactForTerminal(JSON.stringify(details))}\n`);
    }
    if (current.stack) io.stderr(`${depth > 0 ? "caused by: " : ""}${redactForTerminal(current.stack)}\n`);
  }
}

/** The service's re-authentication link through the one URL check; a link that fails it is named as refused, not shown. */
function shownReauthUrl(url: string, say: (message: string) => void): ShownUrl | undefined {
  try {
    return checkShownUrl(url, "re-authentication link");
  } catch (error) {
    say(`${(error as Error).message} Complete single sign-on from the service's own site instead.`);
    return undefined;
  }
}

const NAME_NOT_RESOLVED = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME"]);
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
const WHERE = "--base-url or CHAT_API_URL";

interface Unreachable {
  message: string;
  hint: string;
}

/**
 * What to say when `error` is a request that got no answer from `baseUrl` (refused, name not resolved, reset,
 * ...), looking through the `cause` chain (the client and the sign-in wrap the failed fetch); else undefined.
 */
function describeUnreachable(error: unknown, baseUrl: string): Unreachable | undefined {
  let failure: unknown = error;
  for (let depth = 0; depth < 6 && failure instanceof Error; depth += 1) {
    if (classifyRequestFailure(failure) !== "not-a-request-failure") return report(codeOf(failure), baseUrl);
    failure = failure.cause;
  }
  return undefined;
}

/** The system error code of a failed request: its cause's, or the one every address tried failed with. */
function codeOf(failure: Error): string | undefined {
  for (let current: unknown = failure, depth = 0; current instanceof Error && depth < 4; depth += 1) {
    const { code, errors } = current as { code?: unknown; errors?: unknown };
    if (typeof code === "string") return code;
    const first = Array.isArray(errors) ? (errors[0] as { code?: unknown } | undefined)?.code : undefined;
    if (typeof first === "string") return first;
    current = current.cause;
  }
  return undefined;
}

function report(code: string | undefined, baseUrl: string): Unreachable {
  const host = URL.parse(baseUrl)?.hostname ?? baseUrl;
  if (code && NAME_NOT_RESOLVED.has(code)) {
    return {
      message: `cannot reach ${baseUrl}: the host name ${host} does not resolve (${code})`,
      hint: `Check the host name (${WHERE}), and this machine's network and DNS.`,
    };
  }
  const why =
    code === "ECONNREFUSED"
      ? "nothing listens there (ECONNREFUSED)"
      : `no answer (${code ?? "network error"})`;
  const hint = LOOPBACK_HOSTS.has(host)
    ? `Is the server running? Start a local one with \`chat-cli serve\`, or check the port (${WHERE}).`
    : `Is the service up, and is the URL right (${WHERE})?`;
  return { message: `cannot reach ${baseUrl}: ${why}`, hint };
}
