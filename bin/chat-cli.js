#!/usr/bin/env node
// The chat-cli bin (CommonJS: bin/package.json); the bundle it runs is dist/bin/chat-cli.cjs.
// First, in syntax any Node parses: on a Node too old, say which Node it needs, exit 1.
if (require("../dist/bin/start-refusal.cjs").nodeIsSupported("chat-cli")) {
  try {
    // Node's compile cache (Node >= 22.1): a later start reads the bundle's compiled code instead of compiling it again.
    const { enableCompileCache } = require("node:module");
    if (enableCompileCache) enableCompileCache();
  } catch {
    // A cache that cannot be set up only costs speed.
  }
  require("../dist/bin/chat-cli.cjs");
}
