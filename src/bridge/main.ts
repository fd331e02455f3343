/** Entry point of the `chat-mcp-bridge` bin (placeholder until the bridge lands). */
process.stderr.write("chat-mcp-bridge: not yet implemented\n");
process.exitCode = 1;
