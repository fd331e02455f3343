/** Entry point of the `chat-mcp-bridge` bin: parse the command line, then relay, log in or log out. */

import { CommanderError } from "commander";
import { sanitizeForTerminal } from "../internal/redact.js";
import { answerHostWithError } from "../internal/start-refusal.js";
import { parseBridgeArgs, relayTerminalHint, UsageError } from "./command/arguments.js";
import { describeError } from "./log/log.js";

/** The argument that makes the bin a relay's sign-in process (sign-in-process.ts): the relay passes it, never a person. */
const SIGN_IN_PROCESS_ARG = "--internal-sign-in-process";

/** The account and doctor commands: run from a terminal or a script, never by an MCP host. */
const NOT_FOR_HOSTS = new Set(["login", "logout", "doctor"]);

/**
 * A usage error: commander or we said it on stderr; an MCP host, which hides stderr and would show only
 * "Connection closed", is served it as its instructions and one tool (start-refusal.ts) until it ends the bridge.
 */
async function refuseUsage(message: string, argv: string[]): Promise<void> {
  process.exitCode = 2;
  if (argv.slice(2).some((arg) => NOT_FOR_HOSTS.has(arg))) return;
  await answerHostWithError(`chat-mcp-bridge: ${message}`);
  process.exit(2);
}

async function main(): Promise<void> {
  if (process.argv[2] === SIGN_IN_PROCESS_ARG && !process.stdin.isTTY) {
    const { runSignInProcess } = await import("./sign-in/sign-in-process.js");
    process.exit(await runSignInProcess());
  }
  let command: ReturnType<typeof parseBridgeArgs>;
  try {
    command = parseBridgeArgs(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
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
  const { runRelay } = await import("./relay/run.js");
  const { runAccountCommand, runDoctorCommand } = await import("./command/account-commands.js");
  if (command.kind === "doctor") process.exitCode = await runDoctorCommand(command.target, command.options);
  else if (command.kind === "relay") {
    // The REST API's URL (`<base>/v2`) instead of the MCP endpoint's: a usage error, said before anything starts.
    const restApi = await (await import("./sign-in/oauth.js")).restApiUrlRefusal(command.options.url);
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
      ...(process.argv[1]
        ? { signInProcess: { command: process.execPath, args: [process.argv[1], SIGN_IN_PROCESS_ARG] } }
        : {}),
    });
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
      process.on(signal, () => relay.close(signal));
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
