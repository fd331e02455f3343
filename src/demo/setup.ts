/** What both parts of the demo share: the in-process reference server, a throwaway config dir, the bins and the children's env. */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ReferenceServer, startReferenceServer } from "../server/index.js";
import type { SignInMode } from "./sign-in-mode.js";

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
