/** Waiting for the assistant: a spinner that shows the elapsed time, and Ctrl-C that leaves the request to finish on the server. */
import type { CliContext } from "./context.js";
import { CliError, EXIT } from "./errors.js";

/**
 * Runs `request` (a create, send or resolve) under a spinner when stdout is a terminal and not `--json`. Ctrl-C rejects at once with exit code 130 and
 * says the request may still complete, with `checkCommand` to see whether it did: a POST that was sent cannot
 * be taken back, and the service records the result only once the assistant has answered, so the advice says
 * the command shows nothing new until then (a user who trusted an empty answer would create a duplicate).
 */
export async function waitForAssistant<T>(
  ctx: CliContext,
  wait: { label: string; checkCommand: string },
  request: () => Promise<T>,
): Promise<T> {
  // A person at a terminal sees the wait; `--json` and a pipe get the answer alone.
  const spinner = ctx.io.isTTY && !ctx.globals.json ? ctx.io.spinner(wait.label) : { stop() {} };
  const signals = ctx.signals ?? process;
  let onInterrupt: (() => void) | undefined;
  const interrupted = new Promise<never>((_resolve, reject) => {
    onInterrupt = () =>
      reject(
        new CliError(
          "interrupted while waiting for the assistant; the request was sent and may still complete for a while.",
          EXIT.interrupted,
          `\`${wait.checkCommand}\` shows it only once the assistant has answered, which can take minutes: look there before you run this again.`,
        ),
      );
    signals.once("SIGINT", onInterrupt);
  });
  try {
    return await Promise.race([request(), interrupted]);
  } finally {
    if (onInterrupt) signals.off("SIGINT", onInterrupt);
    spinner.stop();
  }
}
