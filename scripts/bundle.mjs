// Bundles the two bins into ESM files so they start fast (few module loads); native and heavy modules stay external.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { build } from "esbuild";

const outdir = "dist/bin";
const external = [
  "keytar",
  "@napi-rs/keyring",
  "open",
  "express",
  "playwright-core",
  "fsevents",
  // Proxy agents load only when a proxy variable is set; kept as the packages ship them.
  "undici",
  "https-proxy-agent",
];
const requireBanner =
  "import { createRequire as __cmbCreateRequire } from 'node:module'; const require = __cmbCreateRequire(import.meta.url);";

const shared = {
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
  // Less to read and parse on every start (and to install); names stay, so stack traces still read.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
  banner: { js: requireBanner },
};

/**
 * `import { z } from "zod"` in our sources becomes `import * as z from "zod"` (the same namespace),
 * so esbuild keeps only the zod functions used instead of all of zod (locales, JSON Schema import, ...):
 * a third of the code to parse on every run.
 */
const zodByMember = {
  name: "zod-by-member",
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]src[\\/].*\.ts$/, namespace: "file" }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const named = 'import { z } from "zod";';
      if (!source.includes(named)) return undefined;
      return { contents: source.replace(named, 'import * as z from "zod";'), loader: "ts" };
    });
  },
};

/**
 * `import { request } from "node:http"` becomes `require("node:http")` (through the banner's createRequire): an ES
 * import of a built-in builds its ES module facade, which reads every export, lazy ones included, so on Node 24
 * `node:http` loads undici (its WebSocket getter) and `node:crypto` WebCrypto on every start (~40 ms there, a few ms
 * on Node 20). `require` returns the module object and reads nothing until it is used.
 */
const builtinsByRequire = {
  name: "builtins-by-require",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^node:/ }, (args) =>
      // `await import("node:readline")` stays as it is: the chunk of a CommonJS wrapper would give only `default`.
      args.namespace === "builtin" || args.kind === "dynamic-import"
        ? { path: args.path, external: true }
        : // One wrapper per importing module, so it lands in that module's chunk instead of a chunk of its own.
          { path: `${args.importer}|${args.path}`, namespace: "builtin" },
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path.slice(args.path.lastIndexOf("|") + 1))});`,
      loader: "js",
    }));
  },
};

// `chat-cli -V` prints the version of the package.json it was built with, without reading a file at run time.
const { version } = JSON.parse(readFileSync("package.json", "utf8"));
/**
 * One build per bin: a build of both shares more code but cuts it into more chunks (17 files on the bridge's path
 * to its first answer instead of 12), and every ES module file costs a start about a millisecond.
 */
const [bridge, cli] = await Promise.all(
  [
    { entryPoints: { "chat-mcp-bridge": "src/bridge/main.ts" } },
    { entryPoints: { "chat-cli": "src/cli/main.ts" } },
  ].map((entry) =>
    build({
      ...shared,
      ...entry,
      define: { CHAT_CLI_BUNDLED_VERSION: JSON.stringify(version) },
      plugins: [zodByMember, builtinsByRequire],
      write: false,
    }),
  ),
);
// Only modules that use `require` (the CommonJS wrappers of commander and friends) need the banner's createRequire.
for (const file of [...bridge.outputFiles, ...cli.outputFiles]) {
  let text = file.text;
  if (text.startsWith(requireBanner) && !/\brequire\b/.test(text.slice(requireBanner.length))) {
    text = text.slice(requireBanner.length).replace(/^\n/, "");
  }
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, text);
}

// Hashed chunks of earlier builds are never imported again: remove whatever this build did not write.
const written = new Set(
  [bridge, cli].flatMap((result) =>
    Object.keys(result.metafile.outputs).map((file) => relative(outdir, file)),
  ),
);
for (const entry of readdirSync(outdir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const file = relative(outdir, join(entry.parentPath ?? entry.path, entry.name));
  if (!written.has(file)) rmSync(join(outdir, file), { force: true });
}
