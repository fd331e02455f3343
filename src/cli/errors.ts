/** Errors chat-cli raises itself, each carrying the exit code it ends the process with. */
import { isNotChatService } from "../internal/service-shape.js";

/** 130 is 128 + SIGINT, what shells report for a command stopped with Ctrl-C. */
export const EXIT = { ok: 0, error: 1, usage: 2, conflict: 3, auth: 4, interrupted: 130 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure to report as one line, with an optional hint line, ending the process with `exitCode`. */
export class CliError extends Error {
  override readonly name: string = "CliError";
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.error,
    readonly hint?: string,
    /** The underlying error (a ChatApiError, say), shown with --debug. */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

export { UsageError } from "../internal/usage-error.js";

/** The HTTP status of a ChatApiError (or anything shaped like one), else undefined. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}

/** What the service said (`error.message` of the error body) for a ChatApiError, else the error's own message. */
export function serverMessage(error: unknown): string {
  const body = (error as { body?: unknown } | null)?.body;
  const said = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  if (typeof said === "string" && said) return said;
  return error instanceof Error ? error.message : String(error);
}

/** Runs a call about one chat, turning a 404 into a message that names the chat. */
export async function aboutChat<T>(chatId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (statusOf(error) === 404 && !isNotChatService(error)) {
      throw new CliError(
        `chat ${chatId} not found for this account or team (${serverMessage(error)})`,
        EXIT.error,
        "See your chats with `chat-cli list`.",
        error,
      );
    }
    throw error;
  }
}
