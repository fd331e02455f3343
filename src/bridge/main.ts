/** Entry point of the `chat-mcp-bridge` bin: parse the command line, then relay, log in or log out. */

import { runBeforeFirstPlatformFetch } from "../internal/proxy.js";
import { sanitizeForTerminal } from "../internal/redact.js";
import { tuneShortLivedV8 } from "../internal/short-lived-v8.js";
import { isCommanderError, parseBridgeArgs, relayTerminalHint, UsageError } from "./cli.js";
import { tuneRelayV8 } from "./heap.js";
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
  // The doctor and the account commands run once and end; the relay lives as long as its client.
  if (command.kind !== "relay") runBeforeFirstPlatformFetch(tuneShortLivedV8);
  if (command.kind === "doctor") process.exitCode = await runDoctorCommand(command.target, command.options);
  else if (command.kind === "relay") {
    const hint = relayTerminalHint({
      stdinIsTTY: process.stdin.isTTY === true,
      silent: command.options.silent,
      url: sanitizeForTerminal(command.options.url.href, { oneLine: true }),
    });
    if (hint) process.stderr.write(hint);
    const { silent } = command.options;
    const relay = await runRelay(
      command.options,
      { stdin: process.stdin, stdout: process.stdout, env: process.env },
      { afterFirstAnswer: () => tuneRelayQuietly(silent) },
    );
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
      process.on(signal, () => relay.close(signal));
    process.exit(await relay.closed);
  } else process.exitCode = await runAccountCommand(command.kind, command.options);
}

/** The relay's V8 tuning, after its first answer: a failure to tune only costs memory, so it is reported, not fatal. */
function tuneRelayQuietly(silent = false): void {
  try {
    tuneRelayV8();
  } catch (error) {
    if (!silent)
      process.stderr.write(
        `chat-mcp-bridge: V8 tuning skipped: ${sanitizeForTerminal(describeError(error))}\n`,
      );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`chat-mcp-bridge: ${sanitizeForTerminal(describeError(error))}\n`);
  process.exit(1);
});
