/** `npm run demo`: starts the reference server in-process and walks the integration flow through the bridge, then chat-cli. */
import { parseArgs } from "node:util";
import { runBridgeFlow } from "./bridge-flow.js";
import { runCliFlow } from "./cli-flow.js";
import { DemoStepError, formatMs, Narrator } from "./narrator.js";
import {
  chooseSignInMode,
  createDemoSetup,
  type DemoSetup,
  HEADLESS_TEAM,
  removeOnBrokenPipe,
  removeOnSignals,
} from "./setup.js";

const USAGE = `Usage: npm run demo [-- --headless]

Starts the reference server in this process and walks the integration flow twice: through
chat-mcp-bridge (spawned by an MCP SDK client over stdio), then through chat-cli commands.

  --headless   never open a browser: the server approves the sign-in for team ${HEADLESS_TEAM}
               (the default when not on a terminal, or when no browser is available)
  -h, --help   show this help
`;

async function main(): Promise<number> {
  let headless = false;
  try {
    const { values } = parseArgs({
      options: { headless: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      strict: true,
    });
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    headless = values.headless === true;
  } catch (error) {
    process.stderr.write(`demo: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }

  const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
  const narrator = new Narrator((text) => process.stdout.write(text), color);
  const { style } = narrator;
  const mode = chooseSignInMode({
    forcedHeadless: headless,
    stdinIsTTY: process.stdin.isTTY === true,
    stdoutIsTTY: process.stdout.isTTY === true,
    platform: process.platform,
    env: process.env,
  });
  const started = performance.now();

  narrator.line(
    style.bold("chat-mcp-bridge demo: the integration flow, through the bridge and through chat-cli"),
  );
  let setup: DemoSetup;
  try {
    setup = await createDemoSetup(mode);
  } catch (error) {
    process.stderr.write(`\n${style.red("Demo failed during setup:")} ${(error as Error).message}\n`);
    return 1;
  }

  // Ctrl-C, SIGTERM, SIGHUP: the children go with the terminal's signal; the temp config dir (with its tokens) too.
  removeOnSignals(setup.configDir);
  removeOnBrokenPipe(setup.configDir);

  try {
    narrator.line();
    narrator.fact("Reference server", `${setup.server.url}  (in this process, data in memory)`);
    narrator.fact("MCP endpoint", setup.server.mcpUrl);
    narrator.fact(
      "Config dir",
      `${setup.configDir}  (temporary; your own config and keychain are not touched)`,
    );
    if (mode.kind === "browser") {
      narrator.fact("Sign-in", `in your browser (${mode.reason}); run with --headless to skip it`);
    } else {
      narrator.fact(
        "Sign-in",
        `headless, because ${mode.reason}: the server approves sign-ins for team ${HEADLESS_TEAM} without the ` +
          "consent page, and a built-in opener follows the sign-in URL over HTTP",
      );
    }

    const bridge = await runBridgeFlow(setup, narrator);
    const cli = await runCliFlow(setup, narrator);

    const total = performance.now() - started;
    const count = (part: string) => narrator.steps.filter((step) => step.id.startsWith(part));
    const spent = (part: string) => formatMs(count(part).reduce((sum, step) => sum + step.ms, 0));
    narrator.heading(style.green(`✓ All ${narrator.steps.length} steps passed in ${formatMs(total)}`));
    narrator.fact("A. chat-mcp-bridge", `${count("A").length} steps, ${spent("A")}`);
    narrator.fact("B. chat-cli", `${count("B").length} steps, ${spent("B")}`);
    narrator.fact("Chat (bridge)", bridge.chatUrl);
    narrator.fact("Preview (bridge)", bridge.previewUrl);
    narrator.fact("Chat (chat-cli)", cli.chatUrl);
    narrator.fact("Preview (chat-cli)", cli.previewUrl);
    if (mode.kind === "browser") {
      narrator.line();
      narrator.note(
        "The chat and preview pages open in the browser you signed in with, while the server runs.",
      );
      await waitForEnter(`  ${style.bold("Press Enter to stop the reference server.")} `);
    } else {
      narrator.note(
        "The reference server stops with the demo; run `npx chat-cli serve` to keep one running.",
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof DemoStepError) {
      process.stderr.write(
        `\n${style.red(`Demo failed at step ${error.stepId} (${error.stepTitle}):`)} ${error.message}\n`,
      );
    } else {
      process.stderr.write(`\n${style.red("Demo failed:")} ${(error as Error)?.stack ?? String(error)}\n`);
    }
    return 1;
  } finally {
    await setup.close().catch(() => {});
  }
}

/** Waits for one line on stdin (a person at the terminal), or its end. */
function waitForEnter(prompt: string): Promise<void> {
  process.stdout.write(prompt);
  return new Promise((resolve) => {
    const done = () => {
      process.stdin.off("data", done).off("end", done).pause();
      resolve();
    };
    process.stdin.on("data", done).on("end", done).resume();
  });
}

main().then(
  (code) => {
    process.exitCode = code;
    // A stray handle (a child's pipe, a keep-alive socket) must not keep the demo alive after its summary.
    setTimeout(() => process.exit(code), 2000).unref();
  },
  (error: unknown) => {
    process.stderr.write(`demo: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
