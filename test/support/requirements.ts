/** Tests that need something a machine may lack (a keychain, Chromium, Node 22+) skip with a named reason the run summarises. */
import { inject } from "vitest";

declare module "vitest" {
  interface TaskMeta {
    /** `[requirement] why it is missing`, read by test/support/skip-summary.ts. */
    skipReason?: string;
  }
  interface ProvidedContext {
    /** A Node >= 22 binary for the MCP conformance suite (test/global-setup.ts fetches node@24 when needed). */
    node24?: string;
    /** Why there is none, when fetching node@24 failed. */
    node24Missing?: string;
  }
}

/**
 * Options for a `describe` (or `it`) that needs `requirement`: skipped when `missing` says why it is absent, with
 * the reason carried to every test inside so the run's one-line summary (and CHAT_TEST_STRICT) can name it.
 */
export function needs(
  requirement: string,
  missing: string | undefined,
): { skip: boolean; meta: { skipReason?: string } } {
  return missing === undefined
    ? { skip: false, meta: {} }
    : { skip: true, meta: { skipReason: `[${requirement}] ${missing}` } };
}

/** The Node >= 22 binary the conformance suites run on, or why there is none. */
export function node24(): { path?: string; missing?: string } {
  const path = inject("node24");
  return path ? { path } : { missing: inject("node24Missing") ?? "no Node >= 22 binary" };
}
