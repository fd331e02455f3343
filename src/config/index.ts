/** Defaults every part reads from the environment (CONTRACT §1): base URL, MCP URL, API key, config dir. */
import { homedir } from "node:os";
import { join } from "node:path";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

type Env = Record<string, string | undefined>;

/** `$CHAT_API_URL`, else the local reference server; no trailing slash. */
export function defaultBaseUrl(env: Env = process.env): string {
  return (env.CHAT_API_URL?.trim() || DEFAULT_BASE_URL).replace(/\/+$/, "");
}

/** `$CHAT_MCP_URL`, else `<base>/mcp`. */
export function defaultMcpUrl(env: Env = process.env): string {
  return env.CHAT_MCP_URL?.trim() || `${defaultBaseUrl(env)}/mcp`;
}

/** `$CHAT_API_KEY` (REST only; the bridge never needs one). */
export function envApiKey(env: Env = process.env): string | undefined {
  return env.CHAT_API_KEY?.trim() || undefined;
}

/** `$CHAT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/chat-mcp-bridge`, else `~/.config/chat-mcp-bridge`. */
export function configDir(env: Env = process.env): string {
  if (env.CHAT_CONFIG_DIR?.trim()) return env.CHAT_CONFIG_DIR.trim();
  const xdg = env.XDG_CONFIG_HOME?.trim();
  return join(xdg || join(homedir(), ".config"), "chat-mcp-bridge");
}
