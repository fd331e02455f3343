// Bundles the two bins into single ESM files so they start fast (few module loads); native and heavy modules stay external.
import { build } from "esbuild";

const external = ["keytar", "@napi-rs/keyring", "open", "express", "playwright-core", "fsevents"];

await build({
  entryPoints: { "chat-mcp-bridge": "src/bridge/main.ts", "chat-cli": "src/cli/main.ts" },
  outdir: "dist/bin",
  bundle: true,
  splitting: true,
  platform: "node",
  target: "node20",
  format: "esm",
  outExtension: { ".js": ".js" },
  chunkNames: "chunks/[name]-[hash]",
  external,
  sourcemap: false,
  logLevel: "warning",
  banner: {
    js: "import { createRequire as __cmbCreateRequire } from 'node:module'; const require = __cmbCreateRequire(import.meta.url);",
  },
});
