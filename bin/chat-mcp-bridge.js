#!/usr/bin/env node
// The chat-mcp-bridge bin (CommonJS: bin/package.json); the bundle it runs is dist/bin/chat-mcp-bridge.cjs.
// First, in syntax any Node parses: on a Node too old, say which Node it needs (also as the host's initialize error), exit 1.
if (require("../dist/bin/start-refusal.cjs").nodeIsSupported("chat-mcp-bridge", { answerHost: true })) {
  try {
    // Node's compile cache (Node >= 22.1): a later start reads the bundle's compiled code instead of compiling it again.
    const { enableCompileCache } = require("node:module");
    if (enableCompileCache) enableCompileCache();
  } catch {
    // A cache that cannot be set up only costs speed.
  }
  require("../dist/bin/chat-mcp-bridge.cjs");
}
