// Bundles each bin into one CommonJS file (dist/bin/<bin>.cjs), the library's exports with the MCP SDK parts they use
// (ES modules for Node in dist/, CommonJS in dist/cjs/, the root entry for every other runtime in dist/web/, each with
// its source map), and the proxy agents and the cookie jar once each (dist/vendor/); the licences of what the bundles
// carry go beside them (dist/THIRD-PARTY-LICENSES.txt).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { build } from "esbuild";

const pkg = JSON.parse(readFileSync("package.json", "utf8"));
/**
 * Packages the published package carries as one CommonJS file each (dist/vendor/<name>.cjs, named `#<name>` in
 * package.json "imports"), so the bins and the library share one copy instead of installing them: they load only
 * when a proxy applies, a request is pinned to an address or a server sets a cookie.
 */
const VENDORED = ["undici", "https-proxy-agent", "tough-cookie"];
/**
 * A vendored package's file when it carries only part of the package, as an ES module entry. Of undici, the
 * dispatchers we hand to Node's fetch and nothing else: its index also loads its own fetch, whose decompression
 * needs zlib's zstd (Node 22.15+), so the whole package would not even load on Node 22.12-22.14, which we support.
 * The entry does what undici's index does for these (its request/connect methods on every dispatcher: ProxyAgent
 * opens its tunnel with them). undici has no "exports" map; a module that moves fails this build, not a user.
 */
const VENDORED_PARTS = {
  undici: [
    'import Dispatcher from "undici/lib/dispatcher/dispatcher.js";',
    'import api from "undici/lib/api/index.js";',
    "Object.assign(Dispatcher.prototype, api);",
    'export { default as Agent } from "undici/lib/dispatcher/agent.js";',
    'export { default as ProxyAgent } from "undici/lib/dispatcher/proxy-agent.js";',
    'export { default as Dispatcher1Wrapper } from "undici/lib/dispatcher/dispatcher1-wrapper.js";',
  ].join("\n"),
};
for (const name of VENDORED)
  if (pkg.imports?.[`#${name}`] !== `./dist/vendor/${name}.cjs`)
    throw new Error(`package.json "imports" must map #${name} to ./dist/vendor/${name}.cjs`);
/** Resolves each vendored package to its `#name` import, left for Node to load at run time. */
const vendoredImports = {
  name: "vendored-imports",
  setup(build) {
    build.onResolve({ filter: new RegExp(`^(${VENDORED.join("|")})$`) }, (args) => ({
      path: `#${args.path}`,
      external: true,
    }));
  },
};
// `chat-cli -V` prints the version of the package.json it was built with, without reading a file at run time.
const { version } = pkg;
const outdir = "dist/bin";
rmSync(outdir, { recursive: true, force: true });
// The MCP SDK is bundled too: the published package does not depend on it (an install half the size; bench/README.md
// has the start measured both ways).
const bins = await build({
  metafile: true,
  entryPoints: { "chat-mcp-bridge": "src/bridge/main.ts", "chat-cli": "src/cli/main.ts" },
  outdir,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  platform: "node",
  target: "node22.12",
  // CommonJS, one file per bin: spawn -> first answer 126-131 ms vs 149 ms as split ES modules (Node 20), 69 vs 99 (24).
  format: "cjs",
  external: ["keytar", "@napi-rs/keyring", "open", "express", "playwright-core", "fsevents"],
  plugins: [vendoredImports],
  define: {
    CHAT_CLI_BUNDLED_VERSION: JSON.stringify(version),
    CHAT_MCP_BRIDGE_VERSION: JSON.stringify(version),
    // What our ES modules read as import.meta.url (package-version.ts, keychain.ts), the bundle's own URL.
    "import.meta.url": "__bundleFileUrl",
  },
  banner: { js: 'var __bundleFileUrl=require("node:url").pathToFileURL(__filename).href;' },
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
});

// What the bin shims load first, alone and in syntax a Node of years ago parses: on a Node too old for the package,
// each bin says which Node it needs (the bridge also to the host) instead of failing in the bundle with a stack trace.
await build({
  entryPoints: { "start-refusal": "src/internal/start-refusal.ts" },
  outdir,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  platform: "node",
  target: "node10",
  format: "cjs",
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
});

// The library's exports, over tsc's output of the same paths: one ES module pass with the shared code in chunks, so the
// MCP SDK parts the reference server and the sign-in use travel inside the package (the SDK ships ESM, CJS, types and
// maps, about 7 MB a package). What users name or share with us (zod, ky, open, msw, ...) stays their package.
const userPackages = Object.keys({
  ...pkg.dependencies,
  ...pkg.peerDependencies,
  ...pkg.optionalDependencies,
});
rmSync("dist/chunks", { recursive: true, force: true });
const LIBRARY_ENTRIES = {
  index: "src/index.ts",
  "server/index": "src/server/index.ts",
  "testing/index": "src/testing/index.ts",
};
/**
 * What every library build shares: readable output (a user's stack trace points at a line that means something)
 * with its source map (file and line names, not the sources: src/ is not shipped), and the version the User-Agent names.
 */
const libraryOptions = {
  metafile: true,
  bundle: true,
  target: "node22.12",
  external: userPackages,
  plugins: [vendoredImports],
  sourcemap: true,
  // The maps name the original files and lines (what a stack trace needs); their text stays out: 3 MB less to install.
  sourcesContent: false,
  legalComments: "none",
  logLevel: "warning",
  define: { CHAT_MCP_BRIDGE_VERSION: JSON.stringify(version) },
};
// Node, ES modules: one pass with the shared code in chunks; Node's extras (proxies, saved logins) a chunk of their own
// that the root loads only on Node.
const library = await build({
  ...libraryOptions,
  entryPoints: LIBRARY_ENTRIES,
  outdir: "dist",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  platform: "node",
  format: "esm",
});
// Node, CommonJS (`require("chat-mcp-bridge")`): a file per entry that requires the ES module above (Node 22.12+ loads
// ES modules with require), so `require` and `import` share one copy of every class (instanceof holds across them)
// instead of shipping a second 1 MB bundle of each.
rmSync("dist/cjs", { recursive: true, force: true });
for (const name of Object.keys(LIBRARY_ENTRIES)) {
  const target = join("dist/cjs", `${name}.cjs`);
  mkdirSync(dirname(target), { recursive: true });
  const esm = relative(dirname(target), join("dist", `${name}.js`)).replaceAll("\\", "/");
  writeFileSync(target, `"use strict";\n// CommonJS door to the ES module beside it.\nmodule.exports = require(${JSON.stringify(esm)});\n`);
}
/** The web build's node-extras.ts: the module that has none, so no Node built-in is ever met. */
const webExtras = {
  name: "web-extras",
  setup(build) {
    build.onResolve({ filter: /\/node-extras\.js$/ }, (args) => ({
      path: resolve(args.resolveDir, "node-extras.web.ts"),
    }));
  },
};
// Every other runtime (browsers, workers, edge, and what a bundler makes for them): the root entry on Web fetch alone.
rmSync("dist/web", { recursive: true, force: true });
const web = await build({
  ...libraryOptions,
  entryPoints: { index: "src/index.ts" },
  outdir: "dist/web",
  platform: "browser",
  target: "es2022",
  format: "esm",
  plugins: [webExtras],
});
const webNodeInputs = Object.keys(web.metafile.inputs).filter((input) => /^node:|node-extras\.ts$/.test(input));
if (webNodeInputs.length > 0) throw new Error(`The web build holds Node code: ${webNodeInputs.join(", ")}`);
// Each vendored package re-exported by name from an ES module entry, so that esbuild writes the CommonJS export
// annotation Node reads for `import("#undici")`'s named exports.
rmSync("dist/vendor", { recursive: true, force: true });
const vendorEntries = {
  name: "vendor-entries",
  setup(build) {
    build.onResolve({ filter: /^vendor:/ }, (args) => ({ path: args.path.slice(7), namespace: "vendor" }));
    build.onLoad({ filter: /.*/, namespace: "vendor" }, async (args) => {
      const part = VENDORED_PARTS[args.path];
      if (part) return { contents: part, resolveDir: resolve("."), loader: "js" };
      const names = Object.keys(await import(args.path)).filter((name) => /^[A-Za-z_$][\w$]*$/.test(name));
      return {
        contents: `export { ${names.filter((name) => name !== "default").join(", ")} } from "${args.path}";`,
        resolveDir: resolve("."),
        loader: "js",
      };
    });
  },
};
const vendor = await build({
  metafile: true,
  entryPoints: Object.fromEntries(VENDORED.map((name) => [name, `vendor:${name}`])),
  outdir: "dist/vendor",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  platform: "node",
  target: "node22.12",
  format: "cjs",
  plugins: [vendorEntries],
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
});
const declarations = pruneUnreachableDeclarations([
  "dist/index.d.ts",
  "dist/server/index.d.ts",
  "dist/testing/index.d.ts",
]);
writeCommonJsDeclarations(declarations);
writeThirdPartyLicenses(
  [bins.metafile, library.metafile, web.metafile, vendor.metafile],
  "dist/THIRD-PARTY-LICENSES.txt",
);

/**
 * The declarations again as `.d.cts`, for `require`: TypeScript reads a `.d.ts` in this `"type": "module"` package as
 * an ES module's, so a CommonJS project needs its own copy, whose relative imports name `.cjs` files.
 */
function writeCommonJsDeclarations(files) {
  for (const file of files) {
    const text = readFileSync(file, "utf8").replace(
      /((?:from|import\()\s*["'])(\.[^"']+)\.js(["'])/g,
      (_, before, path, after) => `${before}${path}.cjs${after}`,
    );
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file.replace(/\.d\.ts$/, ".d.cts"), text);
  }
}

/** The licence text of every package the bundles carry code of (MIT and Apache-2.0 both ask for it to travel along). */
function writeThirdPartyLicenses(metafiles, target) {
  const packages = new Set();
  for (const metafile of metafiles)
    for (const input of Object.keys(metafile.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (match) packages.add(match[1]);
    }
  const sections = [...packages].sort().map((name) => {
    const dir = join("node_modules", name);
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const file = readdirSync(dir).find((entry) => /^(licen[cs]e|copying|notice)/i.test(entry));
    const text = file
      ? readFileSync(join(dir, file), "utf8").trim()
      : `License: ${manifest.license ?? "unknown"}`;
    return `${name}@${manifest.version} (${manifest.license ?? "unknown"})\n\n${text}\n`;
  });
  writeFileSync(
    target,
    `Code from these packages is bundled into this package's dist/ files.\n\n${sections.join("\n---\n\n")}`,
  );
}

/**
 * Declarations no export reaches are deleted (the bins and the bundles need none), so every `.d.ts` the package
 * ships stands on its own: none names the MCP SDK, which users do not install.
 */
function pruneUnreachableDeclarations(entries) {
  const reachable = new Set();
  const visit = (file) => {
    if (reachable.has(file) || !existsSync(file)) return;
    reachable.add(file);
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(
      /(?:from|import\()\s*["'](\.[^"']+)["']/g,
    ))
      visit(resolve(dirname(file), specifier.replace(/\.js$/, ".d.ts")));
  };
  for (const entry of entries) visit(resolve(entry));
  const walk = (dir) => {
    if (dir === "dist/cjs" || dir === "dist/web") return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".d.ts") && !reachable.has(resolve(path))) rmSync(path);
    }
  };
  walk("dist");
  const sdk = [...reachable].filter((file) => /["']@modelcontextprotocol\//.test(readFileSync(file, "utf8")));
  if (sdk.length > 0)
    throw new Error(`Exported declarations name the MCP SDK: ${sdk.map((f) => relative(".", f)).join(", ")}`);
  return [...reachable];
}
