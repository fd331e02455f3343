/** Public entry of `chat-mcp-bridge/server` (placeholder until the reference server lands). */
export {};
