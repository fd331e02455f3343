// Bundles the two bins into CommonJS files so they start fast (few module loads, no ES loader); native and heavy modules stay external.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { build, transform } from "esbuild";

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

/**
 * esbuild splits code into chunks only in the ES module format, so the bins are bundled as ES modules first and each
 * output file is then turned into CommonJS on its own (`toCommonJs`), beside a package.json that says so.
 */
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
};

/**
 * Rewrites of our own sources on their way into a bin, in one plugin (esbuild takes the first onLoad that answers):
 * - `import { z } from "zod"` becomes `import * as z from "zod"` (the same namespace), so esbuild keeps only the zod
 *   functions used instead of all of zod (locales, JSON Schema import, ...): a third of the code to parse on every run.
 * - Each module of ours loaded by `import()` (`lazyModules`) also imports what the bin's start module imports
 *   (`startImports`). esbuild puts a module in one chunk per set of entry points that reach it, so a start path reached
 *   from the entry and from a few lazy modules each was cut into a dozen chunk files, each read, resolved and linked on
 *   every start (the bridge's first answer: 14 files, 16 ms of its start); reached from all of them alike, it is one
 *   chunk. A lazy module only ever loads after the start module, so the added imports load nothing at run time.
 */
function ourSources({ lazyModules = new Set(), startImports = [] } = {}) {
  return {
    name: "our-sources",
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /[\\/]src[\\/].*\.ts$/, namespace: "file" }, (args) => {
        const source = readFileSync(args.path, "utf8");
        const named = 'import { z } from "zod";';
        const lazy = lazyModules.has(args.path);
        if (!source.includes(named) && !lazy) return undefined;
        const startPath = lazy ? startImports.map((path) => `import ${JSON.stringify(path)};`) : [];
        return {
          contents: [source.replace(named, 'import * as z from "zod";'), ...startPath].join("\n"),
          loader: "ts",
        };
      });
    },
  };
}

/**
 * A built-in that a CommonJS dependency requires at load but uses only on a path the bins never take is loaded on
 * first use instead: commander requires `node:child_process` for executable subcommands (ours are not), and loading
 * it (with `net`, `dgram` and the rest it brings) cost every start of both bins about 3 ms (A/B runs, Node 20 and
 * 24). The wrapper is a proxy of the module's properties. Every other built-in stays a plain `require`: in the
 * CommonJS output, `import { request } from "node:http"` reads `request` from the module object where it is used,
 * never the module's other exports (an ES import of a built-in builds a facade that reads them all: on Node 24,
 * `node:http` then loads undici through its WebSocket getter).
 */
const loadedOnFirstUse = new Set(["node:child_process"]);
const builtinsOnFirstUse = {
  name: "builtins-on-first-use",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === "require-call" && loadedOnFirstUse.has(args.path) && args.namespace !== "on-first-use"
        ? { path: args.path, namespace: "on-first-use" }
        : { path: args.path, external: true },
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: "on-first-use" }, (args) => ({
      contents: `let loaded; const load = () => (loaded ??= require(${JSON.stringify(args.path)}));
module.exports = new Proxy({}, { get: (_, key) => load()[key], has: (_, key) => key in load() });`,
      loader: "js",
    }));
  },
};

// `chat-cli -V` prints the version of the package.json it was built with, without reading a file at run time.
const { version } = JSON.parse(readFileSync("package.json", "utf8"));
/**
 * One build per bin: a build of both would share more code between them but cut each start path into the chunks the
 * two bins share and the ones they do not, and every file on a start path costs that start about a millisecond.
 */
const [bridge, cli] = await Promise.all(
  [
    // `start`: the module every run of the bin loads (chat-cli's entry answers `--version` alone, then loads run.ts).
    { entryPoints: { "chat-mcp-bridge": "src/bridge/main.ts" }, start: "src/bridge/main.ts" },
    { entryPoints: { "chat-cli": "src/cli/main.ts" }, start: "src/cli/run.ts" },
  ].map(async ({ start, ...entry }) => {
    const options = {
      ...shared,
      ...entry,
      define: { CHAT_CLI_BUNDLED_VERSION: JSON.stringify(version) },
      write: false,
    };
    // A first pass finds the start path and the lazy modules; the second bundles the start path as one chunk.
    const { metafile } = await build({ ...options, plugins: [ourSources(), builtinsOnFirstUse] });
    return build({ ...options, plugins: [ourSources(startPathOf(metafile, start)), builtinsOnFirstUse] });
  }),
);
/** The start module's imports and the modules of ours that `import()` loads, as absolute paths, from a first pass. */
function startPathOf(metafile, start) {
  const ours = (record) => !record.external && /^src[\\/]/.test(record.path);
  const lazyModules = new Set(
    Object.values(metafile.inputs).flatMap((input) =>
      input.imports
        .filter((record) => record.kind === "dynamic-import" && ours(record))
        .map((record) => resolve(record.path)),
    ),
  );
  const startImports = metafile.inputs[start].imports
    .filter((record) => record.kind === "import-statement" && ours(record))
    .map((record) => resolve(record.path));
  // A lazy module that the start path also imports statically would import the start path back: a cycle, and
  // esbuild would then order the start chunk from that module, running modules before what they import.
  const startPath = new Set();
  const visit = (path) => {
    if (startPath.has(path)) return;
    startPath.add(path);
    for (const record of metafile.inputs[path]?.imports ?? [])
      if (record.kind === "import-statement" && ours(record)) visit(record.path);
  };
  visit(start);
  const both = [...startPath].filter((path) => path !== start && lazyModules.has(resolve(path)));
  if (both.length > 0)
    throw new Error(
      `imported both statically on the start path and with import(): ${both.join(", ")}; make it one`,
    );
  return { lazyModules, startImports };
}

/**
 * The output files a bin can load: its entry and what they import, statically or with `import()`. esbuild still
 * writes the chunk of an `import()` it dropped as dead code (the SDK's lazy `jose`, once only named SDK functions are
 * imported), which nothing would load.
 */
function loadableFiles(result) {
  const texts = new Map(result.outputFiles.map((file) => [file.path, file.text]));
  const loadable = new Set();
  const visit = (path) => {
    if (loadable.has(path) || !texts.has(path)) return;
    loadable.add(path);
    for (const match of texts.get(path).matchAll(/(?:from|import)\s*\(?\s*"(\.\.?\/[^"]+\.js)"/g))
      visit(join(dirname(path), match[1]));
  };
  // The bin itself is the one output beside the chunks folder.
  for (const path of texts.keys()) if (dirname(path) === resolve(outdir)) visit(path);
  return result.outputFiles.filter((file) => loadable.has(file.path));
}

/**
 * One output file as CommonJS. `import()` of another output file or of a built-in becomes `require` (so no path of
 * the bins loads Node's ES loader, an https server's included), `import.meta.url` the file's own URL, and esbuild
 * turns the static imports and exports into `require` and `module.exports` (read where used, so an export of another
 * chunk is never copied). `import()` of a package stays: `open` is an ES module, which `require` loads only on
 * Node >= 20.19. Strict, as the ES modules were.
 */
async function toCommonJs(text) {
  const source = text.replace(
    /\bimport\(\s*("(?:\.\.?\/[^"]+\.js|node:[a-z_/]+)")\s*\)/g,
    "Promise.resolve().then(()=>require($1))",
  );
  const fileUrl = source.includes("import.meta.url");
  const { code, warnings } = await transform(source, {
    format: "cjs",
    platform: "node",
    target: "node20",
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: "none",
    logLevel: "warning",
    define: fileUrl ? { "import.meta.url": "__cmbFileUrl" } : {},
  });
  // A warning here is a construct CommonJS cannot keep (another `import.meta` field becomes `{}`): stop the build.
  if (warnings.length > 0)
    throw new Error(`not convertible to CommonJS: ${warnings.map((w) => w.text).join("; ")}`);
  const prelude = fileUrl ? 'var __cmbFileUrl=require("node:url").pathToFileURL(__filename).href;' : "";
  return `"use strict";${prelude}${code}`;
}

const files = [bridge, cli].flatMap(loadableFiles);
await Promise.all(
  files.map(async (file) => {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, await toCommonJs(file.text));
  }),
);
// The package is "type": "module"; this folder holds CommonJS.
const scope = "package.json";
writeFileSync(join(outdir, scope), `${JSON.stringify({ type: "commonjs" })}\n`);

// Hashed chunks of earlier builds are never imported again: remove whatever this build did not write.
const written = new Set([scope, ...files.map((file) => relative(outdir, file.path))]);
for (const entry of readdirSync(outdir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const file = relative(outdir, join(entry.parentPath ?? entry.path, entry.name));
  if (!written.has(file)) rmSync(join(outdir, file), { force: true });
}
