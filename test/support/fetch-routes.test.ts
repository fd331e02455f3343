/**
 * routeOrigin's fetch ends as the network's does when its handler hangs: by the caller's signal, even after a garbage
 * collection (which once left a unit test waiting 30 s: undici's Request holds the caller's signal weakly).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, it } from "vitest";
import { routeOrigin } from "./fetch-routes.js";

// A collection on demand, as the suite's memory pressure would make one; only this test process is affected.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

it("a routed fetch that hangs is ended by its timeout signal, whatever the GC does", async () => {
  const unroute = routeOrigin(
    "http://127.0.0.1:8799",
    (request) =>
      new Promise((_resolve, reject) =>
        request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true }),
      ),
  );
  try {
    const pending = (async () => {
      try {
        await fetch("http://127.0.0.1:8799/x", { signal: AbortSignal.timeout(200) });
        return "answered";
      } catch (error) {
        return (error as Error).name;
      }
    })();
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20));
      gc();
    }
    const outcome = await Promise.race([pending, new Promise((r) => setTimeout(() => r("hung"), 3000))]);
    expect(outcome).toBe("TimeoutError");
  } finally {
    unroute();
  }
});
