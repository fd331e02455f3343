#!/usr/bin/env node
// The chat-mcp-bridge bin (CommonJS: bin/package.json); the bundle it runs is dist/bin/chat-mcp-bridge.cjs.
try {
  // Node's compile cache (Node >= 22.1): Node 24 spawn -> first answer 67 ms with it, 85 ms without.
  require("node:module").enableCompileCache?.();
} catch {
  // A cache that cannot be set up only costs speed.
}
const { relayStarted } = require("../dist/bin/chat-mcp-bridge.cjs");
// A relay's garbage is short-lived messages, yet with many calls in flight they survive a scavenge or two: V8 then
// grows the young generation and sets the old one's limit far above what lives, RSS the process keeps. Both flags
// are read whenever V8 would grow a space, so setting them late holds the sizes of then: peak RSS with 1,000 calls
// in flight about a third lower (bench figure 9 shows both; calls/s unchanged). Set after the first answer, since
// once a flag is set Node loads later built-ins without their code cache (a slower first answer when set at start),
// and here, in the bin's own process: the library, which others import, never changes V8's flags.
relayStarted.then(() => {
  const { setFlagsFromString } = require("node:v8");
  setFlagsFromString("--semi-space-growth-factor=1");
  setFlagsFromString("--heap-growing-percent=10");
});
