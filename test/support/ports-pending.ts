/** Unit test files that still open a port, each to move to the in-process server or to the integration project; the list only shrinks. */
export const PORTS_PENDING = new Set([
  // reliability and e2e-client
  "test/reliability/mcp-hostile-input.test.ts",
  "test/reliability/mcp-session-limits.test.ts",
  "test/reliability/oauth-attacks.test.ts",
  "test/reliability/oauth-redirect-uris.test.ts",
  "test/reliability/token-lifetimes.test.ts",
  "test/reliability/v2-hostile-input.test.ts",
  "test/reliability/v2-limits-and-tenancy.test.ts",
  "test/e2e-client/flows.test.ts",

  // bridge
]);
