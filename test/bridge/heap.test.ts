/** The relay's heap tuning: with it, the young generation keeps its initial size under a load of surviving messages. */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const heapModule = new URL("../../dist/bridge/heap.js", import.meta.url).href;

/** The young generation's size (MB) after allocating many small objects, a window of which survives each scavenge. */
function newSpaceAfterLoad(tuned: boolean): number {
  const script = `
    import { getHeapSpaceStatistics } from "node:v8";
    ${tuned ? `(await import(${JSON.stringify(heapModule)})).keepYoungGenerationSmall();` : ""}
    let inFlight = [];
    for (let i = 0; i < 3e6; i++) {
      inFlight.push({ id: i, text: "message " + i });
      if (inFlight.length > 50000) inFlight = [];
    }
    const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
    process.stdout.write(String(space.space_size / 1024 / 1024));`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(child.stderr).toBe("");
  return Number(child.stdout);
}

describe("keepYoungGenerationSmall", () => {
  it("holds the young generation at a few MB where V8 would grow it past 16 MB", () => {
    expect(newSpaceAfterLoad(false)).toBeGreaterThan(16);
    expect(newSpaceAfterLoad(true)).toBeLessThanOrEqual(4);
  });
});
