// Bundles the two bins into single ESM files so they start fast (few module loads); native and heavy modules stay external.
import { readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { build } from "esbuild";

const outdir = "dist/bin";
const external = ["keytar", "@napi-rs/keyring", "open", "express", "playwright-core", "fsevents"];

const result = await build({
  entryPoints: { "chat-mcp-bridge": "src/bridge/main.ts", "chat-cli": "src/cli/main.ts" },
  outdir,
  bundle: true,
  splitting: true,
  platform: "node",
  target: "node20",
  format: "esm",
  chunkNames: "chunks/[name]-[hash]",
  external,
  metafile: true,
  sourcemap: false,
  logLevel: "warning",
  banner: {
    js: "import { createRequire as __cmbCreateRequire } from 'node:module'; const require = __cmbCreateRequire(import.meta.url);",
  },
});

// Hashed chunks of earlier builds are never imported again: remove whatever this build did not write.
const written = new Set(Object.keys(result.metafile.outputs).map((file) => relative(outdir, file)));
for (const entry of readdirSync(outdir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const file = relative(outdir, join(entry.parentPath ?? entry.path, entry.name));
  if (!written.has(file)) rmSync(join(outdir, file), { force: true });
}
