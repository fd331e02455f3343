/** Which client messages the legacy upstream may send twice: any but a call of a tool not declared safe to repeat. */
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { isRequest } from "../../messages/jsonrpc.js";

/**
 * Tools the server says are safe to call twice (annotations `readOnlyHint` or `idempotentHint`, learned from the
 * tools/list answers that pass through). Any other tools/call is sent again only if it never reached the server:
 * running a write twice (two chats, two messages) is worse than saying the outcome is unknown.
 */
export class ResendPolicy {
  readonly #repeatableTools = new Map<string, boolean>();

  /** Learns the tools' hints from a tools/list result. */
  learnTools(result: unknown): void {
    const tools = (result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as Array<{ name?: unknown; annotations?: Record<string, unknown> }>) {
      if (typeof tool?.name !== "string") continue;
      const hints = tool.annotations;
      this.#repeatableTools.set(tool.name, hints?.readOnlyHint === true || hints?.idempotentHint === true);
    }
  }

  /** Whether sending this message a second time is harmless. */
  isRepeatable(message: JSONRPCMessage): boolean {
    if (!isRequest(message) || message.method !== "tools/call") return true;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    return typeof name === "string" && this.#repeatableTools.get(name) === true;
  }
}
