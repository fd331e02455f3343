// A CommonJS TypeScript project: `require` resolves the .d.cts declarations, with the same narrowing.
import { ChatAbortError, ChatClient, ChatConnectionError, type Message } from "chat-mcp-bridge";
import { startReferenceServer } from "chat-mcp-bridge/server";
import { createChatHandlers } from "chat-mcp-bridge/testing";

export async function run(message: Message): Promise<boolean> {
  const client = new ChatClient({ baseUrl: "http://127.0.0.1:8787", token: "t" });
  try {
    await client.getChat("chat_1", { signal: AbortSignal.timeout(1000) });
  } catch (error) {
    if (error instanceof ChatAbortError) return false;
    if (error instanceof ChatConnectionError) return error.requestSent && error.idempotencyKey === undefined;
  }
  void startReferenceServer;
  void createChatHandlers;
  return message.parts.some((part) => part.type === "agent-action" && part.name.length > 0);
}
