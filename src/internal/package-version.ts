/** The package's own folder and version (for `-V` of both bins), found from the package.json above the source or the bundle. */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Walks up from this module (src/internal, or the bundles in dist/bin) to the package's own package.json. */
function findPackage(from: string): { root: string; version: string } | undefined {
  let dir = dirname(fileURLToPath(from));
  for (let depth = 0; depth < 5; depth += 1) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "chat-mcp-bridge" && pkg.version) return { root: dir, version: pkg.version };
    } catch {
      // not here: keep walking up
    }
    dir = dirname(dir);
  }
  return undefined;
}

/** The package's version, read once per module asking (both bins, the bridge's own name on the wire, the server's). */
const versions = new Map<string, string>();

export function packageVersion(from: string = import.meta.url): string {
  let version = versions.get(from);
  if (version === undefined) {
    version = findPackage(from)?.version ?? "0.0.0";
    versions.set(from, version);
  }
  return version;
}

/** The folder holding the package's package.json (and bin/), or undefined when it cannot be found. */
export function packageRoot(from: string = import.meta.url): string | undefined {
  return findPackage(from)?.root;
}
