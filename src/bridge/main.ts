/** Entry point of the `chat-mcp-bridge` bin: parse the command line, then relay, log in or log out. */

import { sanitizeForTerminal } from "../internal/redact.js";
import { isCommanderError, parseBridgeArgs, relayTerminalHint, UsageError } from "./cli.js";
import { describeError } from "./log.js";

/** The argument that makes the bin a relay's sign-in process (sign-in-process.ts): the relay passes it, never a person. */
const SIGN_IN_PROCESS_ARG = "--internal-sign-in-process";

async function main(): Promise<void> {
  if (process.argv[2] === SIGN_IN_PROCESS_ARG && process.send) {
    const { runSignInProcess } = await import("./sign-in-process.js");
    process.exit(await runSignInProcess());
  }
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
  const { runRelay } = await import("./run.js");
  const { runAccountCommand, runDoctorCommand } = await import("./account-commands.js");
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
      ...(process.argv[1]
        ? { signInProcess: { command: process.execPath, args: [process.argv[1], SIGN_IN_PROCESS_ARG] } }
        : {}),
    });
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
      process.on(signal, () => relay.close(signal));
    process.exit(await relay.closed);
  } else process.exitCode = await runAccountCommand(command.kind, command.options);
}

main().catch((error: unknown) => {
  process.stderr.write(`chat-mcp-bridge: ${sanitizeForTerminal(describeError(error))}\n`);
  process.exit(1);
});
