import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { INTEGRATION_GLOBS, ISOLATED_UNIT_FILES } from "./test/projects.js";
import { SlowFirstSequencer } from "./test/support/slow-first-sequencer.js";

/** What both projects share; the root global setup and the reporters belong to the run, not to a project. */
const shared = {
  setupFiles: ["test/support/private-home.ts", "test/support/quiet-output.ts"],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: "forks" as const,
};

/** The unit project's files: in-process, no port (test/support/no-ports.ts), a worker thread each. */
const unit = {
  ...shared,
  include: ["test/**/*.test.ts"],
  // In-process tests start nothing of their own: a worker thread per file costs less than a process.
  pool: "threads" as const,
  setupFiles: [...shared.setupFiles, "test/support/no-ports.ts"],
};

export default defineConfig({
  test: {
    globalSetup: ["test/global-setup.ts"],
    reporters: ["default", "./test/support/skip-summary.ts"],
    // The suite is CPU-bound (the cores are busy from start to end), and every extra worker costs CPU of its own
    // (the measurements are in the commit that set this). One more worker than cores covers the files that wait on
    // a process or a browser; vitest's default, one fewer than the cores, is one file at a time on two cores.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        test: {
          ...unit,
          name: "unit",
          exclude: [...INTEGRATION_GLOBS, ...ISOLATED_UNIT_FILES],
          // One module graph per worker: the files leave no state behind them (test/support sets a home folder per
          // file), and each file re-importing the SDK, zod and the server cost a third of the project's time.
          isolate: false,
        },
      },
      {
        test: {
          ...unit,
          name: "unit-isolated",
          include: ISOLATED_UNIT_FILES,
        },
      },
      {
        test: {
          ...shared,
          name: "integration",
          include: INTEGRATION_GLOBS,
          globalSetup: ["test/integration-setup.ts"],
        },
      },
    ],
  },
});
