/** The demo's temp config (it holds tokens) goes on every way a terminal stops it: Ctrl-C, SIGTERM, SIGHUP, a closed pipe. */
import { rmSync } from "node:fs";
import { constants } from "node:os";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * On SIGINT, SIGTERM or SIGHUP: removes `dir`, says so, and exits with 128 + the signal's number (130 for Ctrl-C),
 * as a shell reports a command a signal stopped. Returns the function that removes the handlers again.
 */
export function removeOnSignals(
  dir: string,
  {
    write = (text: string) => process.stderr.write(text),
    exit = (code: number) => process.exit(code),
  }: { write?: (text: string) => void; exit?: (code: number) => void } = {},
): () => void {
  const handlers = SIGNALS.map((signal) => {
    const handler = () => {
      rmSync(dir, { recursive: true, force: true });
      write(signal === "SIGINT" ? "\nDemo interrupted.\n" : `\nDemo stopped (${signal}).\n`);
      exit(128 + constants.signals[signal]);
    };
    process.once(signal, handler);
    return [signal, handler] as const;
  });
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}

/**
 * A reader that stops early (`npm run demo | head -12`) closes stdout: the next write fails with EPIPE (Node
 * ignores SIGPIPE). Then `dir` goes too, and the demo ends as a shell reports SIGPIPE (128 + 13).
 */
export function removeOnBrokenPipe(
  dir: string,
  stream: NodeJS.WritableStream = process.stdout,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    rmSync(dir, { recursive: true, force: true });
    exit(128 + constants.signals.SIGPIPE);
  });
}
