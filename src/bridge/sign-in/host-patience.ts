/** What the bridge knows of the host it serves, by the name in its `clientInfo`: how long its first lists may wait for a sign-in, how it reloads its tools. */
import type { Implementation } from "@modelcontextprotocol/client";

/**
 * The longest a list of an app people run (a coding CLI, a desktop app) waits for a sign-in, from the host's
 * first message: these start their first turn within a second or two (`claude -p`, `codex exec`) and some
 * health checks give up at 5 s (`gemini mcp list`), so their lists get the `sign_in` tool instead.
 */
export const APP_LIST_WAIT_MS = 1_000;
/** An agent library on an MCP SDK times a request out at 60 s and lists once: its list waits for the person. */
export const LIBRARY_LIST_WAIT_MS = 50_000;
/** The OpenAI Agents SDK gives a request 5 s (`clientSessionTimeoutSeconds`) and lists again on every agent run. */
export const SHORT_LIST_WAIT_MS = 3_000;
/** The Vercel AI SDK has no request time-out: its list waits for the sign-in, which `--auth-timeout` ends. */
export const UNBOUNDED_LIST_WAIT_MS = 30 * 60_000;

/** How a host takes in the tools that arrive after a sign-in (completing "once signed in, ..."); undefined: by itself. */
const RESTART = "restart this app (quit it and start it again) to load chat's tools.";
const BY_ITSELF = "chat's tools appear here by themselves.";
const APPS: Array<{ name: RegExp; reload: string | undefined }> = [
  {
    name: /^claude-code/,

    reload:
      "type /mcp in Claude Code, choose this server and Reconnect (or start Claude Code again) to load chat's tools.",
  },
  { name: /^claude-ai|^claude desktop/, reload: RESTART },
  { name: /codex/, reload: RESTART },
  { name: /cursor/, reload: RESTART },
  { name: /gemini-cli/, reload: "type /mcp refresh in Gemini CLI to load chat's tools." },
  { name: /qwen/, reload: "type /mcp refresh in Qwen Code to load chat's tools." },
  { name: /copilot/, reload: RESTART },
  { name: /opencode/, reload: RESTART },
  { name: /visual studio code|vscode/, reload: undefined },
  { name: /^zed/, reload: RESTART },
  { name: /windsurf/, reload: RESTART },
];

export interface HostFacts {
  /** How long after the host's first message its lists may wait for a sign-in. */
  listWaitMs: number;
  /** What the person does in this host to see the tools a later sign-in brings: a clause after "once signed in, ". */
  reload: string;
}

/**
 * What to expect of the host named `clientInfo`. An app named above answers quickly and reloads as it says; the
 * OpenAI Agents SDK names its client `stdio: <command>`, the Vercel AI SDK `ai-sdk-mcp-client`; any other host is
 * taken for an agent library on an MCP SDK, which follows `list_changed`.
 */
export function hostFacts(clientInfo: Partial<Implementation> | undefined): HostFacts {
  const name = typeof clientInfo?.name === "string" ? clientInfo.name.toLowerCase() : "";
  const app = APPS.find((entry) => entry.name.test(name));
  if (app) return { listWaitMs: APP_LIST_WAIT_MS, reload: app.reload ?? BY_ITSELF };
  if (name.startsWith("stdio: ")) return { listWaitMs: SHORT_LIST_WAIT_MS, reload: BY_ITSELF };
  if (name === "ai-sdk-mcp-client") return { listWaitMs: UNBOUNDED_LIST_WAIT_MS, reload: BY_ITSELF };
  return {
    listWaitMs: LIBRARY_LIST_WAIT_MS,
    reload: "chat's tools appear here by themselves (restart this MCP host if they do not).",
  };
}
