// `npm run test:hosts`: the coding CLIs' cells (test/host-clis), one file per host, each run by scripts/test-hosts.mjs
// inside its own loopback-only network namespace; not part of `npm test`.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/host-clis/*.cells.ts"],
    setupFiles: ["test/support/private-home.ts"],
    reporters: ["default", "./test/support/skip-summary.ts"],
    pool: "forks",
    testTimeout: 400_000,
    hookTimeout: 60_000,
    // The two 70 s cells and one more at a time: a host process each, on a shared two-core machine.
    maxConcurrency: 3,
  },
});
