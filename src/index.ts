/** Public entry of `chat-mcp-bridge`: ChatClient, wire types and schemas, errors, pending-task helpers. */
export * from "./client/index.js";
export * from "./wire/index.js";
