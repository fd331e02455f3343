/** How long each MCP host waits for an answer to its first list, from what each host library does (docs/hosts.md). */
import type { Implementation } from "@modelcontextprotocol/client";

/** The MCP SDKs (v1 and v2) time a request out at 60 s: a list held this long is still answered in time. */
export const DEFAULT_LIST_WAIT_MS = 50_000;
/** The OpenAI Agents SDK gives a request 5 s (`clientSessionTimeoutSeconds`) and lists again on every agent run. */
export const SHORT_LIST_WAIT_MS = 3_000;
/**
 * The Vercel AI SDK has no request time-out: its list waits for the sign-in itself, which `--auth-timeout` ends;
 * this bound only keeps the wait finite.
 */
export const UNBOUNDED_HOST_LIST_WAIT_MS = 30 * 60_000;

/**
 * How long a host's list may be held while a sign-in is under way, by the `clientInfo` it sent: the OpenAI Agents
 * SDK names its client `stdio: <command>` unless given a name, the Vercel AI SDK `ai-sdk-mcp-client`. A host not
 * known here gets the MCP SDKs' patience, which most hosts are built on.
 */
export function listWaitMs(clientInfo: Partial<Implementation> | undefined): number {
  const name = typeof clientInfo?.name === "string" ? clientInfo.name : "";
  if (name.startsWith("stdio: ")) return SHORT_LIST_WAIT_MS;
  if (name === "ai-sdk-mcp-client") return UNBOUNDED_HOST_LIST_WAIT_MS;
  return DEFAULT_LIST_WAIT_MS;
}
