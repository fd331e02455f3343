/** Entry point of the `chat-mcp-bridge` bin: parse the command line, then relay, log in or log out. */

import { sanitizeForTerminal } from "../internal/redact.js";
import { isCommanderError, parseBridgeArgs, relayTerminalHint, UsageError } from "./cli.js";
import { describeError } from "./log.js";
// Imported statically: the relay is what nearly every start runs, and in the bundle's entry file it is one module
// load fewer on the way to the first answer (the SDK, sign-in and doctor stay behind dynamic imports).
import { runAccountCommand, runDoctorCommand, runRelay } from "./run.js";

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
  if (command.kind === "doctor") process.exitCode = await runDoctorCommand(command.target, command.options);
  else if (command.kind === "relay") {
    const hint = relayTerminalHint({
      stdinIsTTY: process.stdin.isTTY === true,
      silent: command.options.silent,
      url: sanitizeForTerminal(command.options.url.href, { oneLine: true }),
    });
    if (hint) process.stderr.write(hint);
    await runRelay(command.options, process.env);
  } else process.exitCode = await runAccountCommand(command.kind, command.options);
}

main().catch((error: unknown) => {
  process.stderr.write(`chat-mcp-bridge: ${sanitizeForTerminal(describeError(error))}\n`);
  process.exit(1);
});
