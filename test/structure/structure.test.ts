/** The house rules of ARCHITECTURE.md that a machine can check: arrows, import cycles, purpose lines, no V8 flags, test placement. */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchDir } from "../support/scratch-dir.js";
import { importCycles, readSourceGraph, type SourceModule } from "./source-graph.js";

const root = join(import.meta.dirname, "..", "..");
const modules = readSourceGraph(root);

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

describe("the source tree", () => {
  it("has no import cycle, type-only imports included", () => {
    expect(importCycles(modules)).toEqual([]);
  });

  it("imports only along the layers of ARCHITECTURE.md", () => {
    // Each folder of src/ and the folders it may import; anything else is an arrow the architecture does not have.
    const allowed: Record<string, string[]> = {
      "index.ts": ["client", "wire"],
      wire: [],
      config: [],
      internal: [],
      auth: ["config", "internal"],
      client: ["auth", "config", "internal", "wire"],
      bridge: ["auth", "config", "internal", "wire"],
      server: ["internal", "wire"],
      testing: ["config", "server"],
      cli: ["auth", "client", "config", "internal", "server", "wire"],
      demo: ["cli", "client", "server", "wire"],
    };
    const layerOf = (path: string) => path.split("/")[1] as string;
    const wrong = modules.flatMap((module) =>
      module.imports
        .filter((target) => layerOf(target) !== layerOf(module.path))
        .filter((target) => !(allowed[layerOf(module.path)] ?? []).includes(layerOf(target)))
        .map((target) => `${module.path} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it("imports only downward through the bridge's folders, in the order of ARCHITECTURE.md", () => {
    // The bridge's folders, top first: a module may import its own folder's modules and those of folders below it.
    const layers = [
      "src/bridge", // main.ts, the bin's entry
      "src/bridge/command", // the bin's command line: its arguments, help, login/logout/doctor
      "src/bridge/doctor",
      "src/bridge/relay", // one relay on its streams: stdin to the gate and back, each request answered once
      "src/bridge/sign-in",
      "src/bridge/eras", // the era router and one relay per server era
      "src/bridge/translate",
      "src/bridge/steps",
      "src/bridge/stdio",
      "src/bridge/upstream",
      "src/bridge/upstream/legacy",
      "src/bridge/upstream/http",
      "src/bridge/log",
      "src/bridge/options",
      "src/bridge/messages",
    ];
    // A module's layer is the deepest listed folder holding it (doctor/checks/ is doctor's).
    const layerOf = (path: string) =>
      layers.reduce(
        (found, folder, index) =>
          path.startsWith(`${folder}/`) && folder.length >= (layers[found]?.length ?? 0) ? index : found,
        -1,
      );
    const bridge = modules.filter((module) => module.path.startsWith("src/bridge/"));
    expect(bridge.filter((module) => layerOf(module.path) < 0).map((m) => m.path)).toEqual([]);
    const upward = bridge.flatMap((module) =>
      module.imports
        .filter((target) => target.startsWith("src/bridge/") && layerOf(target) < layerOf(module.path))
        .map((target) => `${module.path} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("opens every module with a one-line comment on its purpose", () => {
    const silent = modules
      .filter((module) => !/^(#![^\n]*\n)?(\/\*\*|\/\/) \S/.test(module.text))
      .map((m) => m.path);
    expect(silent).toEqual([]);
  });

  it("sets no V8 flag by any path: no setFlagsFromString, no node:v8, no flag in a bin or its spawn (Node: 'may result in unpredictable behavior')", () => {
    const shipped = [
      ...modules.map((module) => ({ path: module.path, text: module.text })),
      ...listFiles(join(root, "bin")).map((path) => ({
        path: relative(root, path),
        text: readFileSync(path, "utf8"),
      })),
    ];
    const tuning = shipped
      .filter(({ text }) =>
        /setFlagsFromString|["'](node:)?v8["']|--(no-)?(turbofan|maglev|max-semi-space|max-old-space|semi-space|heap-growing)/.test(
          text,
        ),
      )
      .map(({ path }) => path);
    expect(tuning).toEqual([]);
  });

  it("names the package's version in one place, package.json: the source asks packageVersion()", () => {
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    const literal = new RegExp(`["'\`]${version.replaceAll(".", "\\.")}["'\`]`);
    expect(modules.filter((module) => literal.test(module.text)).map((m) => m.path)).toEqual([]);
  });

  it("keeps tests under test/, never beside the source", () => {
    const misplaced = listFiles(join(root, "src")).filter((path) => /\.test\.[cm]?[jt]s$/.test(path));
    expect(misplaced).toEqual([]);
  });

  it("has every file and folder ARCHITECTURE.md names", () => {
    const tracked = ["bench", "bin", "docs", "scripts", "src", "test"].flatMap((dir) =>
      listFiles(join(root, dir)).map((path) => relative(root, path).split("\\").join("/")),
    );
    const text = readFileSync(join(root, "ARCHITECTURE.md"), "utf8");
    const named = [...text.matchAll(/`([^`\s]+)`/g)]
      .map((match) => match[1]!.replace(/[,.:;)/]+$/, ""))
      // A path, or a module's name: templates (`src/<area>/<module>.ts`), bare extensions and the build's output
      // (dist/, checked by test/pack) name no file of the tree.
      .filter((name) => /\.(ts|mjs|js|json|md|sh)$|^(src|test|docs|scripts|bin|bench)\//.test(name))
      .filter((name) => !/[<*]/.test(name) && !name.startsWith(".") && !name.startsWith("dist/"));
    // A name with a folder is from the root or, as the text names modules, from the folder of its area; a bare
    // module name is a file somewhere in the tree.
    const exists = (name: string) =>
      tracked.some((path) => path === name || path.startsWith(`${name}/`) || path.endsWith(`/${name}`));
    expect(named.length).toBeGreaterThan(50);
    expect([...new Set(named)].filter((name) => !exists(name))).toEqual([]);
    // A folder named with its trailing slash (`eras/`, `upstream/http/`) is a folder of the tree, as the text names it.
    const folders = [...text.matchAll(/`([a-z][a-z-]*(?:\/[a-z-]+)*)\/`/g)].map((match) => match[1]!);
    const isFolder = (name: string) =>
      tracked.some((path) => path.startsWith(`${name}/`) || path.includes(`/${name}/`));
    expect(folders.length).toBeGreaterThan(10);
    expect(
      [...new Set(folders)].filter((name) => name !== "dist" && !name.startsWith("dist/") && !isFolder(name)),
    ).toEqual([]);
  });

  it("reads chats on the pages through the chat service, not the store", () => {
    const pages = modules.find((module) => module.path.split("\\").join("/") === "src/server/pages.ts");
    expect(pages?.imports.map((path) => path.split("\\").join("/"))).not.toContain("src/server/store.ts");
  });
});

describe("the checks themselves", () => {
  const module = (path: string, imports: string[]): SourceModule => ({ path, text: "", imports });

  it("finds a cycle through three modules and ignores a diamond", () => {
    const cycle = [module("a.ts", ["b.ts"]), module("b.ts", ["c.ts"]), module("c.ts", ["a.ts"])];
    const diamond = [
      module("d.ts", ["e.ts", "f.ts"]),
      module("e.ts", ["g.ts"]),
      module("f.ts", ["g.ts"]),
      module("g.ts", []),
    ];
    expect(importCycles([...cycle, ...diamond])).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  it("reads type-only, re-export, inline-type and dynamic imports as edges, and nothing from comments' packages", () => {
    const dir = scratchDir("cmb-structure-");
    mkdirSync(join(dir, "src", "folder"), { recursive: true });
    const files: Record<string, string> = {
      "src/main.ts": [
        'import type { A } from "./a.js";',
        'export { B } from "./b.js";',
        'const lazy = () => import("./folder/index.js");',
        'let c: import("./c.js").C;',
        'import { z } from "zod";',
      ].join("\n"),
      "src/a.ts": "export type A = 1;",
      "src/b.ts": "export const B = 1;",
      "src/c.ts": "export type C = 1;",
      "src/folder/index.ts": "export {};",
    };
    for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
    const main = readSourceGraph(dir).find((m) => m.path === "src/main.ts");
    expect(main?.imports.sort()).toEqual(["src/a.ts", "src/b.ts", "src/c.ts", "src/folder/index.ts"]);
  });
});
