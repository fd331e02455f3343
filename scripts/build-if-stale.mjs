// `npm run demo` and `npm test` build first only when the build's inputs changed since the last build (`npm run build` always builds).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const INPUT_FILES = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "scripts/bundle.mjs",
];
const INPUT_DIRS = ["src"];
export const OUTPUTS = [
  "dist/demo/index.js",
  "dist/bin/chat-cli.cjs",
  "dist/bin/chat-mcp-bridge.cjs",
  "dist/vendor/undici.cjs",
  "dist/vendor/https-proxy-agent.cjs",
];
const STAMP = "dist/.build-inputs";

function filesUnder(root, dir) {
  const out = [];
  const walk = (path) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) out.push(relative(root, full));
    }
  };
  if (existsSync(join(root, dir))) walk(join(root, dir));
  return out;
}

/** A digest of every build input's path and content under `root`. */
export function inputsDigest(root) {
  const paths = [
    ...INPUT_FILES.filter((file) => existsSync(join(root, file))),
    ...INPUT_DIRS.flatMap((d) => filesUnder(root, d)),
  ]
    .map((path) => path.split("\\").join("/"))
    .sort();
  const hash = createHash("sha256");
  for (const path of paths)
    hash
      .update(`${path}\0`)
      .update(readFileSync(join(root, path)))
      .update("\0");
  return hash.digest("hex");
}

/** True when dist/ holds every output and was built from exactly the current inputs. */
export function buildIsCurrent(root) {
  if (!OUTPUTS.every((output) => existsSync(join(root, output)))) return false;
  try {
    return readFileSync(join(root, STAMP), "utf8").trim() === inputsDigest(root);
  } catch {
    return false;
  }
}

/** Records that dist/ was built from the current inputs. */
export function writeStamp(root) {
  writeFileSync(join(root, STAMP), `${inputsDigest(root)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL("../", import.meta.url));
  // `npm run build` ends with `--stamp`: a full build is current by definition.
  if (process.argv[2] === "--stamp") writeStamp(root);
  else if (buildIsCurrent(root)) {
    process.stderr.write("dist/ is up to date with src/: not rebuilding (npm run build forces it).\n");
  } else {
    execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "build"], {
      cwd: root,
      stdio: "inherit",
      shell: process.platform === "win32",
    });
  }
}
