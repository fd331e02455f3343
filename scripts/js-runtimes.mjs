// Bun and Deno binaries for the SDK's runtime tests, npm's builds of them (`@oven/bun-<os>-<arch>`, `@deno/<os>-<arch>`),
// installed once into the test cache dir (outside the repo), with no install script run, as node-release.mjs does Node.
// `node scripts/js-runtimes.mjs bun` prints the path of a Bun binary (or why there is none, exit 1).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { installIntoCache, testCacheDir } from "./node-release.mjs";

/** The npm package carrying this platform's binary of `runtime`, and the binary's path inside it; undefined when none. */
function binaryPackage(runtime) {
  const { platform, arch } = process;
  if (runtime === "bun") {
    const os = { linux: "linux", darwin: "darwin", win32: "windows" }[platform];
    const cpu = { x64: "x64", arm64: "aarch64" }[arch];
    if (!os || !cpu) return undefined;
    return { name: `@oven/bun-${os}-${cpu}`, binary: join("bin", platform === "win32" ? "bun.exe" : "bun") };
  }
  if (runtime === "deno") {
    const os = { linux: "linux", darwin: "darwin", win32: "win32" }[platform];
    const cpu = { x64: "x64", arm64: "arm64" }[arch];
    if (!os || !cpu) return undefined;
    const name = platform === "linux" ? `@deno/linux-${cpu}-glibc` : `@deno/${os}-${cpu}`;
    return { name, binary: platform === "win32" ? "deno.exe" : "deno" };
  }
  throw new Error(`unknown runtime ${runtime}`);
}

const MAJORS = { bun: 1, deno: 2 };

/**
 * The path of a `runtime` ("bun" or "deno") binary: installed once into the cache. Returns `{ path }`, or
 * `{ reason }` saying why there is none (no build for this platform, no registry), so a test can skip by name.
 */
export function ensureRuntime(runtime) {
  const pkg = binaryPackage(runtime);
  if (!pkg) return { reason: `npm has no ${runtime} build for ${process.platform}-${process.arch}` };
  const prefix = join(testCacheDir(), `${runtime}-${MAJORS[runtime]}`);
  const path = join(prefix, "node_modules", ...pkg.name.split("/"), pkg.binary);
  if (!existsSync(path)) {
    try {
      installIntoCache(prefix, `${pkg.name}@${MAJORS[runtime]}`, {
        extraArgs: ["--ignore-scripts"],
        stderr: "pipe",
        timeout: 180_000,
      });
    } catch (error) {
      return {
        reason: `npm could not install ${pkg.name}@${MAJORS[runtime]}: ${String(error.stderr ?? error.message)
          .trim()
          .split("\n")
          .at(-1)}`,
      };
    }
  }
  if (!existsSync(path)) return { reason: `npm installed ${pkg.name} into ${prefix} but ${path} is missing` };
  return { path };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const found = ensureRuntime(process.argv[2] ?? "bun");
  if (found.path) process.stdout.write(`${found.path}\n`);
  else {
    process.stderr.write(`${found.reason}\n`);
    process.exit(1);
  }
}
