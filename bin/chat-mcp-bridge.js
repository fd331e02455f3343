#!/usr/bin/env node
// The chat-mcp-bridge bin (CommonJS: bin/package.json); the bundle it runs is dist/bin/chat-mcp-bridge.cjs.
try {
  // Node's compile cache (Node >= 22.1): a later start reads the bundle's compiled code instead of compiling it again.
  require("node:module").enableCompileCache?.();
} catch {
  // A cache that cannot be set up only costs speed.
}
require("../dist/bin/chat-mcp-bridge.cjs");
