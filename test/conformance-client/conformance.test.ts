/**
 * The official MCP conformance suite, client mode, through chat-mcp-bridge driven by test/conformance-client/client.mjs:
 * every client scenario of each requirement set, with a 2025-era and a 2026-07-28 stdio driver.
 */
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const conformance = resolve(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const client = `${process.execPath} ${resolve(import.meta.dirname, "client.mjs")}`;

/** The suite's frozen requirement sets this project answers to, and the eras of the stdio client. */
const REQUIREMENT_SETS = ["2026-07-28", "2025-11-25"] as const;
const DRIVERS = ["legacy", "modern"] as const;
type Driver = (typeof DRIVERS)[number];
/** Scenarios run at once: each is the suite, a driver, a bridge and a headless browser; more starve 2 cores. */
const PARALLEL = 4;

/**
 * A scenario expected to fail, and why: a reason alone holds wherever the scenario runs; `cells` narrows it to
 * some requirement sets and drivers (`"<revision> <driver>"`).
 */
type Expectation = string | { reason: string; cells: string[] };
const expectedFailures = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "expected-failures.json"), "utf8"),
) as Record<string, Expectation>;

function expectedReason(scenario: string, revision: string, driver: Driver): string | undefined {
  const expectation = expectedFailures[scenario];
  if (expectation === undefined || typeof expectation === "string") return expectation;
  return expectation.cells.includes(`${revision} ${driver}`) ? expectation.reason : undefined;
}

/**
 * The client scenarios a requirement set runs, from `conformance list --requirements`: the scored ones and the
 * ones it runs and reports without scoring (extensions, scenarios added after the release).
 */
function clientScenarios(revision: string): string[] {
  const listing = execFileSync(
    process.execPath,
    [conformance, "list", "--client", "--requirements", revision],
    {
      encoding: "utf8",
    },
  );
  const scored = listing.split(/Client scenarios[^\n]*\n/)[1]?.split(/\n\s*\n/)[0] ?? "";
  const notScored = listing.split(/never scored:\n/)[1] ?? "";
  return [
    ...[...scored.matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1]!),
    ...[...notScored.matchAll(/^\s+- (\S+) \[client\]$/gm)].map((match) => match[1]!),
  ];
}

/** A counting gate: at most PARALLEL scenario runs at once, the rest wait their turn. */
let running = 0;
const queue: Array<() => void> = [];
async function inTurn<T>(job: () => Promise<T>): Promise<T> {
  if (running >= PARALLEL) await new Promise<void>((go) => queue.push(go));
  running += 1;
  try {
    return await job();
  } finally {
    running -= 1;
    queue.shift()?.();
  }
}

/** One scenario at one revision's wire (`--force`, as `--requirements` runs it), the driver chosen by env. */
function runScenario(
  scenario: string,
  revision: string,
  driver: Driver,
): Promise<{ passed: boolean; output: string }> {
  const args = [conformance, "client", "--command", client, "--scenario", scenario];
  args.push("--spec-version", revision, "--force", "--timeout", "60000");
  return inTurn(
    () =>
      new Promise((done) => {
        execFile(
          process.execPath,
          args,
          {
            cwd: root,
            maxBuffer: 16 * 1024 * 1024,
            timeout: 120_000,
            env: { ...process.env, CONFORMANCE_DRIVER: driver },
          },
          (error, stdout, stderr) => done({ passed: !error, output: `${stdout}${stderr}` }),
        );
      }),
  );
}

describe("MCP conformance suite, client scenarios, through the bridge", () => {
  const scenarios = Object.fromEntries(
    REQUIREMENT_SETS.map((revision) => [revision, clientScenarios(revision)]),
  ) as Record<(typeof REQUIREMENT_SETS)[number], string[]>;

  it("knows the scenarios this project targets, and every expected failure is one of them", () => {
    for (const target of ["initialize", "tools_call", "sse-retry", "auth/metadata-default"]) {
      expect(scenarios["2025-11-25"]).toContain(target);
    }
    for (const target of ["http-custom-headers", "auth/iss-supported", "json-schema-ref-no-deref"]) {
      expect(scenarios["2026-07-28"]).toContain(target);
    }
    const known = new Set(Object.values(scenarios).flat());
    for (const listed of Object.keys(expectedFailures)) expect(known).toContain(listed);
    for (const expectation of Object.values(expectedFailures)) {
      if (typeof expectation === "string") continue;
      for (const cell of expectation.cells) {
        const [revision, driver] = cell.split(" ");
        expect(REQUIREMENT_SETS as readonly string[]).toContain(revision);
        expect(DRIVERS as readonly string[]).toContain(driver);
      }
    }
  });

  for (const revision of REQUIREMENT_SETS) {
    for (const driver of DRIVERS) {
      describe.concurrent(`requirement set ${revision}, ${driver} stdio driver`, () => {
        for (const scenario of scenarios[revision]) {
          const reason = expectedReason(scenario, revision, driver);
          const title = reason
            ? `${scenario} (expected to fail: ${reason.slice(0, 60)}…)`
            : `${scenario} passes`;
          // One retry: a few scenarios check timing (sse-retry's `retry` delay), which a loaded machine can skew.
          it(title, { timeout: 180_000, retry: 1 }, async () => {
            const { passed, output } = await runScenario(scenario, revision, driver);
            // An expected failure that starts passing must leave the list, as the suite's own baseline demands.
            expect(passed, output.slice(-4000)).toBe(!reason);
          });
        }
      });
    }
  }
});
