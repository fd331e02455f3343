/** A one-command process's V8 tuning: on Node 20 WebAssembly stays on its baseline tier (so the process ends at once), after fetch's code loaded. */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const tuningModule = new URL("../../dist/internal/short-lived-v8.js", import.meta.url).href;

// (func (export "f") (param i32) (result i32) (local i32): a loop summing its argument down to 0)
const HOT_WASM = [
  0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 27, 1, 25,
  1, 1, 127, 3, 64, 32, 1, 32, 0, 106, 33, 1, 32, 0, 65, 1, 107, 34, 0, 13, 0, 11, 32, 1, 11,
];

/** Runs `f` hot until V8 has tiered it up to TurboFan (a background compile), for at most 3 s. */
const RUN_HOT = `
  for (let round = 0; round < 60 && !%IsTurboFanFunction(f); round++) {
    for (let i = 0; i < 50; i++) f(100000);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }`;

interface Outcome {
  tuned: boolean;
  /** Whether Node's fetch implementation (undici) had loaded when the call returned. */
  fetchLoaded: boolean;
  /** The hot WebAssembly function's tier after it ran hot and V8 had time to tier it up. */
  tier: "liftoff" | "turbofan" | "other";
}

/** Runs `tuneShortLivedV8(major)` (major omitted: this Node's) in a fresh process, then runs WebAssembly hot. */
function runTuned(major?: number): Outcome {
  const script = `
    const { tuneShortLivedV8 } = await import(${JSON.stringify(tuningModule)});
    const tuned = tuneShortLivedV8(${major ?? ""});
    const fetchLoaded = process.moduleLoadList.includes("NativeModule internal/deps/undici/undici");
    const { instance } = await WebAssembly.instantiate(new Uint8Array(${JSON.stringify(HOT_WASM)}));
    const f = instance.exports.f;
    ${RUN_HOT}
    const tier = %IsLiftoffFunction(f) ? "liftoff" : %IsTurboFanFunction(f) ? "turbofan" : "other";
    process.stdout.write(JSON.stringify({ tuned, fetchLoaded, tier }));`;
  return JSON.parse(runWithNatives(script));
}

/** Runs an ES module script with V8's natives syntax (`%IsTurboFanFunction`) and returns what it printed. */
function runWithNatives(script: string): string {
  const args = ["--allow-natives-syntax", "--input-type=module", "-e", script];
  const child = spawnSync(process.execPath, args, { encoding: "utf8" });
  expect(child.stderr).toBe("");
  return child.stdout;
}

/**
 * Whether Node compiled its fetch implementation (undici) from its built-in code cache in a process that ran
 * `tuneShortLivedV8` and then a fetch (of nothing: only the loading matters). Run without V8 flags on the command
 * line, which would change V8's flag hash from the start and refuse the cache for every built-in.
 */
function fetchFromCodeCache(): boolean {
  const script = `
    const { tuneShortLivedV8 } = await import(${JSON.stringify(tuningModule)});
    tuneShortLivedV8();
    await fetch("data:,").catch(() => undefined);
    const { createRequire } = await import("node:module");
    const { internalBinding } = createRequire(import.meta.url)("internal/test/binding");
    const usage = internalBinding("builtins").getCacheUsage();
    process.stdout.write(String(usage.compiledWithCache.has("internal/deps/undici/undici")));`;
  const args = ["--expose-internals", "--no-warnings", "--input-type=module", "-e", script];
  const child = spawnSync(process.execPath, args, { encoding: "utf8" });
  expect(child.stderr).toBe("");
  return child.stdout === "true";
}

const thisMajor = Number(process.versions.node.split(".")[0]);

describe("tuneShortLivedV8", () => {
  it("without it, V8 tiers hot WebAssembly up to TurboFan (what a Node 20 process waits for at exit)", () => {
    const script = `
      const { instance } = await WebAssembly.instantiate(new Uint8Array(${JSON.stringify(HOT_WASM)}));
      const f = instance.exports.f;
      ${RUN_HOT}
      process.stdout.write(String(%IsTurboFanFunction(f)));`;
    expect(runWithNatives(script)).toBe("true");
  });

  it("given a major other than 20, sets nothing: no flag, fetch not loaded, WebAssembly tiers up", () => {
    const untouched = { tuned: false, fetchLoaded: false, tier: "turbofan" };
    expect(runTuned(22)).toEqual(untouched);
    expect(runTuned(24)).toEqual(untouched);
  });

  // V8 reads --liftoff-only at run time on Node 20 only (Node 24 ignores it there), so this runs where it applies.
  it(`on this Node (${thisMajor}) does what the version calls for`, () => {
    const outcome = runTuned();
    if (thisMajor === 20) expect(outcome).toEqual({ tuned: true, fetchLoaded: true, tier: "liftoff" });
    else expect(outcome).toEqual({ tuned: false, fetchLoaded: false, tier: "turbofan" });
    // Either way fetch's code comes from Node's code cache: on Node 20 it loaded before the flag changed V8's hash.
    expect(fetchFromCodeCache()).toBe(true);
  });
});
