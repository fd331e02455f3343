/** Defaults every part reads from the environment: base URL, MCP URL, API key, config dir. */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { posix, win32 } from "node:path";

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

/** The machine a path is chosen for (another one's, in tests). */
export interface ConfigPlatform {
  platform?: NodeJS.Platform;
  home?: string;
  exists?: (path: string) => boolean;
}

/**
 * `$CHAT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/chat-mcp-bridge`, else the platform's place, as gh chooses it:
 * `%AppData%\chat-mcp-bridge` on Windows (the roaming profile, like gh's `%AppData%\GitHub CLI`), and
 * `~/.config/chat-mcp-bridge` on Linux and macOS (where gh, git and most CLIs keep theirs, not `~/Library`).
 * On Windows, a `~\.config\chat-mcp-bridge` that an earlier version made is kept while `%AppData%` holds no
 * folder of ours: logins saved there still work after an upgrade.
 */
export function configDir(env: Env = process.env, machine: ConfigPlatform = {}): string {
  if (env.CHAT_CONFIG_DIR?.trim()) return env.CHAT_CONFIG_DIR.trim();
  const { platform = process.platform, exists = existsSync } = machine;
  const path = platform === "win32" ? win32 : posix;
  const home = machine.home ?? homedir();
  const xdg = env.XDG_CONFIG_HOME?.trim();
  if (xdg) return path.join(xdg, "chat-mcp-bridge");
  const dotConfig = path.join(home, ".config", "chat-mcp-bridge");
  if (platform !== "win32") return dotConfig;
  const appData = path.join(env.APPDATA?.trim() || path.join(home, "AppData", "Roaming"), "chat-mcp-bridge");
  return !exists(appData) && exists(dotConfig) ? dotConfig : appData;
}
