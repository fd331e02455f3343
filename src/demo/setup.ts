/** What both parts of the demo share: how it signs in, the in-process reference server, a throwaway config dir (removed however the demo stops), the bins and the children's env. */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ReferenceServer, startReferenceServer } from "../server/index.js";

/** The team the server approves for in headless mode; it has a hosting project, so the whole flow runs. */
export const HEADLESS_TEAM = "acme";

/** A request that needs a database: the scripted assistant asks for Neon, then for a setup script. */
export const DEMO_PROMPT = "Build a to-do app that keeps its tasks in a database";

export interface DemoSetup {
  server: ReferenceServer;
  mode: SignInMode;
  /** Temp CHAT_CONFIG_DIR: the bridge's file token store lives here, never in the user's config or keychain. */
  configDir: string;
  /** Environment of every child process the demo starts. */
  childEnv: Record<string, string>;
  bins: { bridge: string; cli: string };
  prompt: string;
  signInTimeoutMs: number;
  close(): Promise<void>;
}

/** Paths of the package's own bins (the two-line shims of `bin/`), from `dist/demo/`. */
export function packageBins(): { bridge: string; cli: string } {
  const root = new URL("../../", import.meta.url);
  const bins = {
    bridge: fileURLToPath(new URL("bin/chat-mcp-bridge.js", root)),
    cli: fileURLToPath(new URL("bin/chat-cli.js", root)),
  };
  for (const bundle of ["dist/bin/chat-mcp-bridge.cjs", "dist/bin/chat-cli.cjs"]) {
    if (!existsSync(fileURLToPath(new URL(bundle, root)))) {
      throw new Error(`${bundle} is missing: run \`npm run build\` first (\`npm run demo\` does).`);
    }
  }
  return bins;
}

/** `$BROWSER` for headless sign-in: this Node running the demo's opener, quoted for paths with spaces. */
export function headlessBrowserCommand(): string {
  const opener = fileURLToPath(new URL("./headless-browser.js", import.meta.url));
  return `"${process.execPath}" "${opener}"`;
}

export async function createDemoSetup(mode: SignInMode): Promise<DemoSetup> {
  const bins = packageBins();
  const configDir = mkdtempSync(join(tmpdir(), "chat-mcp-bridge-demo-"));
  const removeConfigDir = () => rmSync(configDir, { recursive: true, force: true });
  let server: ReferenceServer;
  try {
    server = await startReferenceServer({
      port: 0,
      host: "127.0.0.1",
      ...(mode.kind === "headless" ? { autoApprove: HEADLESS_TEAM } : {}),
    });
  } catch (error) {
    removeConfigDir();
    throw error;
  }

  const childEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    // The demo's children get their server, token and config from the demo, never from the user's shell.
    if (value !== undefined && !/^CHAT_(API_URL|API_KEY|MCP_URL|CONFIG_DIR|MCP_CLIENT_SECRET)$/.test(name)) {
      childEnv[name] = value;
    }
  }
  childEnv.CHAT_CONFIG_DIR = configDir;
  childEnv.NO_COLOR = "1";
  if (mode.kind === "headless") childEnv.BROWSER = headlessBrowserCommand();

  return {
    server,
    mode,
    configDir,
    childEnv,
    bins,
    prompt: DEMO_PROMPT,
    signInTimeoutMs: mode.kind === "browser" ? 300_000 : 30_000,
    close: async () => {
      await server.close();
      removeConfigDir();
    },
  };
}

export type SignInMode = { kind: "browser"; reason: string } | { kind: "headless"; reason: string };

export interface SignInSituation {
  /** `--headless` was given. */
  forcedHeadless: boolean;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
}

/** Whether a browser can be opened here: `$BROWSER`, a desktop session on Linux/BSD, or macOS/Windows. */
export function browserAvailable(
  platform: NodeJS.Platform,
  env: Record<string, string | undefined>,
): string | null {
  if (env.BROWSER?.trim()) return "$BROWSER is set";
  if (platform === "darwin") return "macOS";
  if (platform === "win32") return "Windows";
  if (env.WAYLAND_DISPLAY?.trim()) return "a Wayland session";
  if (env.DISPLAY?.trim()) return "an X11 session";
  return null;
}

/** A real browser only when a person can see the terminal and a browser can be opened; else headless, saying why. */
export function chooseSignInMode(situation: SignInSituation): SignInMode {
  if (situation.forcedHeadless) return { kind: "headless", reason: "--headless was given" };
  if (!situation.stdinIsTTY || !situation.stdoutIsTTY) {
    return { kind: "headless", reason: "the demo is not running on a terminal" };
  }
  if (situation.env.CI?.trim() && situation.env.CI !== "false") {
    return { kind: "headless", reason: "$CI is set" };
  }
  const browser = browserAvailable(situation.platform, situation.env);
  if (!browser)
    return { kind: "headless", reason: "no browser is available (no $BROWSER, no desktop session)" };
  return { kind: "browser", reason: `a terminal and ${browser}` };
}

// The temp config (it holds tokens) goes on every way a terminal stops the demo: Ctrl-C, SIGTERM, SIGHUP, a closed pipe.

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
