/** Reads src/ as a graph of modules (relative imports, type-only and dynamic ones included) for the structure checks. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export interface SourceModule {
  /** Path relative to the repository root, e.g. "src/bridge/relay/run.ts". */
  path: string;
  text: string;
  /** Relative imports resolved to repository paths (static, type-only, re-exports and dynamic import()). */
  imports: string[];
}

const IMPORT_SPECIFIER =
  /(?:\bimport\s+(?:type\s+)?(?:[^"'`;]*?\s+from\s+)?|\bexport\s+(?:type\s+)?[^"'`;]*?\s+from\s+|\bimport\s*\(\s*)["']([^"']+)["']/g;

function listTs(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listTs(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

function resolveSpecifier(from: string, specifier: string, known: Set<string>): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

/** Every .ts module under `srcDir` with its resolved relative imports. */
export function readSourceGraph(root: string, srcDir = "src"): SourceModule[] {
  const files = listTs(join(root, srcDir));
  const known = new Set(files);
  return files.map((file) => {
    const text = readFileSync(file, "utf8");
    const imports = new Set<string>();
    for (const match of text.matchAll(IMPORT_SPECIFIER)) {
      const target = resolveSpecifier(file, match[1] as string, known);
      if (target && target !== file) imports.add(relative(root, target));
    }
    return { path: relative(root, file), text, imports: [...imports] };
  });
}

/** Each import cycle once, as the list of modules along it (Tarjan's strongly connected components). */
export function importCycles(modules: SourceModule[]): string[][] {
  const edges = new Map(modules.map((module) => [module.path, module.imports]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of edges.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return cycles;
}
