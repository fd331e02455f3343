import { defineConfig } from "vitest/config";
import { INTEGRATION_GLOBS } from "./test/projects.js";

/** What both projects share; the root global setup and the reporters belong to the run, not to a project. */
const shared = {
  setupFiles: ["test/support/quiet-output.ts"],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: "forks" as const,
};

export default defineConfig({
  test: {
    globalSetup: ["test/global-setup.ts"],
    reporters: ["default", "./test/support/skip-summary.ts"],
    projects: [
      { test: { ...shared, name: "unit", include: ["test/**/*.test.ts"], exclude: INTEGRATION_GLOBS } },
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
