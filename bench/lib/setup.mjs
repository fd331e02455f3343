/** What every figure stands on: the reference server in a child process, seeded chats, and a stored bridge login. */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { exited, onLines, timeToExit } from "./processes.mjs";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const benchDir = fileURLToPath(new URL("../", import.meta.url));
export const bridgeBin = `${repoRoot}bin/chat-mcp-bridge.js`;
export const cliBin = `${repoRoot}bin/chat-cli.js`;

/** An environment for children: no inherited NODE_OPTIONS or config dirs, so every spawn starts the same way. */
export function childEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  for (const name of [
    "NODE_OPTIONS",
    "CHAT_API_KEY",
    "CHAT_API_URL",
    "CHAT_MCP_URL",
    "BROWSER",
    "XDG_CONFIG_HOME",
  ]) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

/**
 * Starts a server script (which prints its URLs as one JSON line) in a child; `stop()` ends it, and `stderrLines()`
 * gives the distinct lines it wrote on stderr (numbers blanked, so a warning repeated 1,000 times shows once).
 */
export async function startServerChild(script, args = [], nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    env: childEnv(),
  });
  const stderrLines = new Set();
  onLines(child.stderr, (line) => {
    if (stderrLines.size < 20) stderrLines.add(line.replace(/\d+/g, "N"));
  });
  const info = await new Promise((resolve, reject) => {
    onLines(child.stdout, (line) => resolve(JSON.parse(line)));
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
  });
  return {
    ...info,
    pid: child.pid,
    stderrLines: () => [...stderrLines],
    stop: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited(child);
      clearTimeout(timer);
    },
  };
}

/** Creates `count` chats on the `acme` team (the account the bench's OAuth login approves) and returns their ids. */
export async function seedChats(server, count) {
  const { ChatClient } = await import("../../dist/index.js");
  const client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme });
  const ids = [];
  for (let index = 0; index < count; index++) {
    const chat = await client.createChat({
      message: `bench chat ${index}: say hello`,
      title: `bench ${index}`,
    });
    ids.push(chat.id);
  }
  return ids;
}

/**
 * Signs the bridge in once (its `login` subcommand, with a headless browser against the server's auto-approve)
 * into `configDir` with the file token store, then reads the same bearer token for the direct client.
 */
export async function signInBridge(server, configDir) {
  // The same headless browser the tests use: it follows the sign-in URL over plain HTTP.
  const browser = `"${process.execPath}" "${benchDir}../test/auth/fixtures/http-browser.mjs"`;
  await timeToExit(process.execPath, [bridgeBin, "login", "--token-store", "file", server.mcpUrl], {
    env: childEnv({ CHAT_CONFIG_DIR: configDir, BROWSER: browser }),
  });
  const { OAuthSession } = await import("../../dist/auth/index.js");
  const session = new OAuthSession({
    serverUrl: server.mcpUrl,
    tokenStore: "file",
    configDir,
    openBrowser: false,
    clientName: "chat-mcp-bridge",
  });
  const token = await session.accessToken();
  if (!token) throw new Error("the bridge login stored no access token");
  return token;
}
