/**
 * Which test files form the integration project (spawned bins and helper processes, Chromium, a real keychain, a
 * real proxy, the conformance suites); every other test file is the unit project, run in the test's own process.
 * test/structure/test-projects.test.ts fails when a unit test file starts a process.
 */

/** Folders whose every test is integration: each is named for the outside party it runs against. */
export const INTEGRATION_FOLDERS = [
  "test/conformance-client",
  "test/conformance-server",
  "test/browser",
  "test/keychain",
  "test/network",
  "test/pack",
  "test/runtimes",
  "test/inspector",
  "test/bridge/hosts",
  "test/hosts",
];

/** Single files elsewhere that start a process (a bin, a fake browser, a child server). */
export const INTEGRATION_FILES = [
  "test/structure/architecture-hops.test.ts",
  "test/auth/browser-command.test.ts",
  "test/auth/login-lock.test.ts",
  "test/auth/loopback-callback.test.ts",
  "test/auth/loopback-requests.test.ts",
  "test/auth/session/browser-sign-in.test.ts",
  "test/auth/session/device-sign-in-fallback.test.ts",
  "test/auth/session/id-token-bearer.test.ts",
  "test/auth/session/mix-up.test.ts",
  "test/auth/session/oauth-session.test.ts",
  "test/auth/session/provider-quirks.test.ts",
  "test/auth/session/reference-server.test.ts",
  "test/auth/session/sign-in-client.test.ts",
  "test/bridge/assertion-sign-in.test.ts",
  "test/bridge/bin-stdio.test.ts",
  "test/bridge/client-credentials.test.ts",
  "test/bridge/confirm-tool-notification.test.ts",
  "test/bridge/confirm-tool.test.ts",
  "test/bridge/doctor/checks/era.test.ts",
  "test/bridge/dpop.test.ts",
  "test/bridge/doctor/diagnose.test.ts",
  "test/bridge/help-texts.test.ts",
  "test/bridge/host-visible-errors.test.ts",
  "test/bridge/large-messages.test.ts",
  "test/bridge/login-interrupted.test.ts",
  "test/bridge/eras/concurrent-listens.test.ts",
  "test/bridge/eras/legacy-server.test.ts",
  "test/bridge/eras/modern-client-legacy-streams.test.ts",
  "test/bridge/eras/modern-reconnect-window.test.ts",
  "test/bridge/eras/modern-server.test.ts",
  "test/bridge/eras/reference-server.test.ts",
  "test/bridge/mcp-remote-flags.test.ts",
  "test/bridge/reference-server.test.ts",
  "test/bridge/upstream/http/node-http-exchange.test.ts",
  "test/bridge/upstream/http/node-http-failures.test.ts",
  "test/bridge/upstream/http/node-http-time-outs.test.ts",
  "test/bridge/upstream/legacy.test.ts",
  "test/bridge/upstream/legacy/recovery.test.ts",
  "test/bridge/url-diagnostics.test.ts",
  "test/cli/browser.test.ts",
  "test/cli/completion-shells.test.ts",
  "test/cli/process.test.ts",
  "test/client/connection-refused.test.ts",
  "test/demo/demo.test.ts",
  "test/e2e-client/presets.test.ts",
  "test/reliability/auth-lock-after-disk-full.test.ts",
  "test/reliability/auth-metadata-validation.test.ts",
  "test/reliability/bridge-faults.test.ts",
  "test/reliability/bridge-hostile-answers.test.ts",
  "test/reliability/bridge-lost-answer.test.ts",
  "test/reliability/client-lost-answer.test.ts",
  "test/reliability/bridge-malicious-metadata.test.ts",
  "test/reliability/bridge-quiet-probes.test.ts",
  "test/reliability/bridge-sign-in-faults.test.ts",
  "test/reliability/bridge-stdin-fuzz.test.ts",
  "test/reliability/log-file-planted.test.ts",
  "test/reliability/secrets-in-errors.test.ts",
  "test/reliability/server-crash-and-disk.test.ts",
  "test/reliability/server-restart-sign-in.test.ts",
  "test/reliability/sign-in-account-commands.test.ts",
  "test/reliability/sign-in-ends-at-once.test.ts",
  "test/reliability/sign-in-local-attacker.test.ts",
  "test/reliability/sign-in-never-silent.test.ts",
  "test/reliability/sign-in-survives-host-kill.test.ts",
  "test/reliability/sign-in-takeover.test.ts",
  "test/reliability/small-hostile-inputs.test.ts",
  "test/reliability/terminal-escapes.test.ts",
  "test/reliability/token-lifetimes.test.ts",
  "test/reliability/v2-hostile-http.test.ts",
  "test/reliability/v2-limits-over-socket.test.ts",
  "test/server/listening-server.test.ts",
  "test/server/node-http.test.ts",
  "test/server/oauth/client-metadata-pinned-address.test.ts",
  "test/server/oauth/conformance-authorization.test.ts",
  "test/server/serve-flags.test.ts",
];

/**
 * Unit test files that mock modules (vi.mock) or count what a fresh import loads: they get a module graph of their
 * own (the `unit-isolated` project). The rest of the unit project shares one module graph per worker (isolate: false),
 * as hono's and ky's suites do: each file re-importing the SDK, zod and the server was a third of the project's time.
 */
export const ISOLATED_UNIT_FILES = [
  "test/auth/keychain.test.ts",
  "test/auth/open-url.test.ts",
  "test/auth/session/device-sign-in.test.ts",
  "test/auth/session/index.test.ts",
  "test/client/requests.test.ts",
];

/** The integration project's globs, for vitest.config.ts. */
export const INTEGRATION_GLOBS = [
  ...INTEGRATION_FOLDERS.map((folder) => `${folder}/**/*.test.ts`),
  ...INTEGRATION_FILES,
];

/**
 * The files that take longest (real-time host waits, the conformance suites, the browser), started first so that
 * none of them is left running alone at the end of a run; vitest orders by last run's times when it has them.
 */
export const SLOW_FILES_FIRST = [
  "test/conformance-client/conformance.test.ts",
  "test/pack/pack.test.ts",
  "test/hosts/first-sign-in.test.ts",
  "test/conformance-server/conformance.test.ts",
  "test/reliability/bridge-faults.test.ts",
  "test/bridge/mcp-remote-flags.test.ts",
  "test/hosts/slow-sign-in.test.ts",
  "test/bridge/reference-server.test.ts",
  "test/bridge/eras/reference-server.test.ts",
  "test/cli/browser.test.ts",
  "test/bridge/hosts/long-calls.test.ts",
  "test/hosts/long-calls.test.ts",
  "test/browser/consent.test.ts",
  "test/cli/process.test.ts",
  "test/browser/device-code.test.ts",
];
