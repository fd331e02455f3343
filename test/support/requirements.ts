/** Tests that need something a machine may lack (a keychain, Chromium, python3, openssl) skip with a named reason the run summarises. */

declare module "vitest" {
  interface TaskMeta {
    /** `[requirement] why it is missing`, read by test/support/skip-summary.ts. */
    skipReason?: string;
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
