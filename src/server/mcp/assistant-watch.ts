/** A tool call's view of the assistant's wait: MCP progress on the request's own stream, and the request's cancellation. */
import type { ServerContext } from "@modelcontextprotocol/server";
import type { AssistantWatch, OnAssistantProgress } from "../context.js";

/**
 * The assistant's wait as the request sees it: its progress, and its cancellation (a 2025 `notifications/cancelled`
 * or a 2026-07-28 request whose stream the client closed), which calls the wait off before anything is written.
 */
export function watchOf(ctx: ServerContext): AssistantWatch {
  return { onProgress: progressOf(ctx), signal: ctx.mcpReq.signal };
}

/**
 * MCP progress for a call whose request carries a `progressToken` (the MCP progress utility): each of the
 * assistant's steps becomes a `notifications/progress` on the request's own stream, in either era.
 */
function progressOf(ctx: ServerContext): OnAssistantProgress | undefined {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  return ({ progress, total, message }) => {
    if (ctx.mcpReq.signal.aborted) return;
    void ctx.mcpReq
      .notify({ method: "notifications/progress", params: { progressToken, progress, total, message } })
      .catch(() => undefined);
  };
}
