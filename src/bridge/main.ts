/** Entry point of the `chat-mcp-bridge` bin: parse the command line, then relay, log in or log out. */

import { sanitizeForTerminal } from "../internal/redact.js";
import { answerHostWithError } from "../internal/start-refusal.js";
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

/** The account and doctor commands: run from a terminal or a script, never by an MCP host. */
const NOT_FOR_HOSTS = new Set(["login", "logout", "doctor"]);

/**
 * A usage error: commander or we said it on stderr; an MCP host, which hides stderr and would show only
 * "Connection closed", also gets it as the error of its `initialize` (and of anything else it asks) before the exit.
 */
async function refuseUsage(message: string, argv: string[]): Promise<void> {
  process.exitCode = 2;
  if (argv.slice(2).some((arg) => NOT_FOR_HOSTS.has(arg))) return;
  await answerHostWithError(`chat-mcp-bridge: ${message}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let command: ReturnType<typeof parseBridgeArgs>;
  try {
    command = parseBridgeArgs(process.argv);
  } catch (error) {
    if (isCommanderError(error)) {
      if (error.exitCode === 0) return;
      // Commander's message carries its "Did you mean" suggestion.
      return refuseUsage(`${error.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ")}`, process.argv);
    }
    if (error instanceof UsageError) {
      process.stderr.write(`chat-mcp-bridge: ${error.message}\n`);
      return refuseUsage(error.message, process.argv);
    }
    throw error;
  }
  // What runs a command loads once commander has parsed it (as changesets does).
  const { runAccountCommand, runDoctorCommand, runRelay } = await import("./run.js");
  if (command.kind === "doctor") process.exitCode = await runDoctorCommand(command.target, command.options);
  else if (command.kind === "relay") {
    // The REST API's URL (`<base>/v2`) instead of the MCP endpoint's: a usage error, said before anything starts.
    const restApi = await (await import("./oauth.js")).restApiUrlRefusal(command.options.url);
    if (restApi) {
      process.stderr.write(`chat-mcp-bridge: ${restApi}\n`);
      return refuseUsage(restApi, process.argv);
    }
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
  } else process.exitCode = await runAccountCommand(command.kind, command.options);
}

main().catch((error: unknown) => {
  process.stderr.write(`chat-mcp-bridge: ${sanitizeForTerminal(describeError(error))}\n`);
  process.exit(1);
});
