/** Entry point of the `chat-mcp-bridge` bin: parse the command line, then relay, log in or log out. */

import { sanitizeForTerminal } from "../internal/redact.js";
import { isCommanderError, parseBridgeArgs, relayTerminalHint, UsageError } from "./cli.js";
import { describeError } from "./log.js";

let started: () => void = () => {};
/**
 * Resolves once a relay has written its first answer: the bin (bin/chat-mcp-bridge.js) tunes V8 for relaying from
 * then on, in its own process only.
 */
export const relayStarted = new Promise<void>((resolve) => {
  started = resolve;
});

async function main(): Promise<void> {
  let command: ReturnType<typeof parseBridgeArgs>;
  try {
    command = parseBridgeArgs(process.argv);
  } catch (error) {
    if (isCommanderError(error)) {
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`chat-mcp-bridge: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  // What runs a command loads once commander has parsed it (as changesets does).
  const { runAccountCommand, runDoctorCommand, runRelay } = await import("./run.js");
  if (command.kind === "doctor") process.exitCode = await runDoctorCommand(command.target, command.options);
  else if (command.kind === "relay") {
    const hint = relayTerminalHint({
      stdinIsTTY: process.stdin.isTTY === true,
      silent: command.options.silent,
      url: sanitizeForTerminal(command.options.url.href, { oneLine: true }),
    });
    if (hint) process.stderr.write(hint);
    const relay = await runRelay(command.options, {
      stdin: process.stdin,
      stdout: process.stdout,
      env: process.env,
    });
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
      process.on(signal, () => relay.close(signal));
    void relay.firstAnswer.then(started);
    process.exit(await relay.closed);
  } else {
    // Ctrl-C while login waits for the browser: say so, and exit through process.exit so the lock file goes too
    // (login-lock.ts releases held locks on exit; a process killed by the signal would leave it behind).
    if (command.kind === "login")
      process.once("SIGINT", () => {
        process.stderr.write("\nchat-mcp-bridge: Sign-in cancelled; nothing was stored.\n");
        process.exit(130);
      });
    process.exitCode = await runAccountCommand(command.kind, command.options);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`chat-mcp-bridge: ${sanitizeForTerminal(describeError(error))}\n`);
  process.exit(1);
});
