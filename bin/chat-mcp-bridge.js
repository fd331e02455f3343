#!/usr/bin/env node
// The chat-mcp-bridge bin: Node's compile cache first (Node >= 22.1; absent on Node 20), so repeat starts skip compiling the bundle.
import * as nodeModule from "node:module";

try {
  nodeModule.enableCompileCache?.();
} catch {
  // A cache that cannot be set up only costs speed.
}
await import("../dist/bin/chat-mcp-bridge.js");
