#!/usr/bin/env node
// The chat-mcp-bridge bin, CommonJS (bin/package.json): Node's compile cache first (Node >= 22.1; absent on Node 20), so repeat starts skip compiling the bundle.
try {
  require("node:module").enableCompileCache?.();
} catch {
  // A cache that cannot be set up only costs speed.
}
require("../dist/bin/chat-mcp-bridge.js");
