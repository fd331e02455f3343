// Bundles each bin into one CommonJS file (dist/bin/<bin>.cjs) in one esbuild pass; the SDK, native and optional modules stay external.
import { readFileSync, rmSync } from "node:fs";
import { build } from "esbuild";

// `chat-cli -V` prints the version of the package.json it was built with, without reading a file at run time.
const { version } = JSON.parse(readFileSync("package.json", "utf8"));
const outdir = "dist/bin";
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { "chat-mcp-bridge": "src/bridge/main.ts", "chat-cli": "src/cli/main.ts" },
  outdir,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  platform: "node",
  target: "node20",
  // CommonJS, one file per bin: spawn -> first answer 126-131 ms vs 149 ms as split ES modules (Node 20), 69 vs 99 (24).
  format: "cjs",
  external: [
    "keytar",
    "@napi-rs/keyring",
    "open",
    "express",
    "playwright-core",
    "fsevents",
    // Proxy agents load only when a proxy variable is set; kept as the packages ship them.
    "undici",
    "https-proxy-agent",
    // The SDK (sign-in, doctor, serve; required from its CommonJS build): Node 20 --version 87 vs 102 ms bundled.
    "@modelcontextprotocol/*",
  ],
  define: {
    CHAT_CLI_BUNDLED_VERSION: JSON.stringify(version),
    // What our ES modules read as import.meta.url (package-version.ts, keychain.ts), the bundle's own URL.
    "import.meta.url": "__bundleFileUrl",
  },
  banner: { js: 'var __bundleFileUrl=require("node:url").pathToFileURL(__filename).href;' },
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
});
