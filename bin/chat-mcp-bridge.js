#!/usr/bin/env node
// The chat-mcp-bridge bin (CommonJS: bin/package.json); the bundle it runs is dist/bin/chat-mcp-bridge.cjs.
// First, in syntax any Node parses: on a Node too old, say which Node it needs (also as the host's initialize error), exit 1.
if (require("../dist/bin/start-refusal.cjs").nodeIsSupported("chat-mcp-bridge", { answerHost: true })) {
  try {
    // Node's compile cache (Node >= 22.1): Node 24 spawn -> first answer 67 ms with it, 85 ms without.
    const { enableCompileCache } = require("node:module");
    if (enableCompileCache) enableCompileCache();
  } catch {
    // A cache that cannot be set up only costs speed.
  }
  const { relayStarted } = require("../dist/bin/chat-mcp-bridge.cjs");
  // Two kinds of V8 tuning, each measured by the bench against the same bin without it (alternating runs, Node 20 and 26):
  // - A relay's garbage is short-lived messages, yet with many calls in flight they survive a scavenge or two: V8 then
  //   grows the young generation and sets the old one's limit far above what lives, RSS the process keeps. The
  //   growth flags hold the sizes of the moment they are set: peak RSS with 1,000 calls in flight about a third lower
  //   (bench figure 9 shows both).
  // - A relay's time goes to I/O and to JSON.parse/stringify (native code), so its JavaScript stays on the baseline
  //   tier: the optimizing compilers (TurboFan; Maglev on Node 22+) cost more in compile zones, optimized code and
  //   compiler threads than they save. Off, figure 3 read 90-92 -> 77-78 MB and 1,507-1,664 -> 1,724-1,797 calls/s on
  //   Node 20, 109-112 -> 89 MB and 2,116-2,253 -> 2,351-2,583 calls/s on Node 26; relay p50/p99 within the noise.
  // All are read whenever V8 would grow a space or tier a function up, so setting them late works. Set after the first
  // answer, since once a flag is set Node loads later built-ins without their code cache (a slower first answer when set
  // at start), and here, in the bin's own process: the library, which others import, never changes V8's flags.
  // test/bridge/bin-v8-tuning.test.ts checks that nothing is optimized after the first answer.
  relayStarted.then(() => {
    const { setFlagsFromString } = require("node:v8");
    setFlagsFromString("--semi-space-growth-factor=1");
    setFlagsFromString("--heap-growing-percent=10");
    setFlagsFromString("--no-turbofan");
    setFlagsFromString("--no-maglev");
  });
}
