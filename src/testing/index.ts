/** Public entry of `chat-mcp-bridge/testing` (placeholder until the msw handlers land). */
export {};
