/**
 * The official MCP conformance suite, client mode, through chat-mcp-bridge driven by test/conformance-client/driver.ts:
 * every client scenario of each requirement set, with a 2025-era and a 2026-07-28 stdio driver (the `auth/*` ones
 * with the set's own era's driver only: runsIn below).
 *
 * One suite process per requirement set and driver (`conformance client --requirements`), not one per scenario: the
 * suite's start-up was most of a scenario's cost. It starts client.mjs per scenario, which hands the scenario to the
 * driver in this process; the driver runs as many scenarios at once as the machine has cores.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Driver, gate, type ScenarioRun, serveDriver } from "./driver.js";

const root = resolve(import.meta.dirname, "../..");
const conformance = resolve(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const client = `${process.execPath} ${resolve(import.meta.dirname, "client.mjs")}`;

/** The suite's frozen requirement sets this project answers to, and the eras of the stdio client. */
const REQUIREMENT_SETS = ["2026-07-28", "2025-11-25"] as const;
const DRIVERS = ["legacy", "modern"] as const;
/** The stdio client of each requirement set's own era. */
const OWN_DRIVER: Record<(typeof REQUIREMENT_SETS)[number], Driver> = {
  "2026-07-28": "modern",
  "2025-11-25": "legacy",
};
/**
 * Whether a cell runs a scenario. The `auth/*` scenarios run with the requirement set's own stdio client only: the
 * sign-in is between the bridge and the suite's servers, the same whichever era the host speaks (the signed-out
 * gate of each era is test/bridge/sign-in-gate.test.ts's). The other client runs the rest, the era translation.
 */
const runsIn = (revision: (typeof REQUIREMENT_SETS)[number], driver: Driver, scenario: string) =>
  !scenario.startsWith("auth/") || OWN_DRIVER[revision] === driver;
/** Scenarios run at once: each is a bridge and a headless browser beside the suite's servers. */
const PARALLEL = Math.max(2, availableParallelism());
/** One scenario's bound once its turn has come (the suite's own time-out, which counts the wait, is only a guard). */
const SCENARIO_TIMEOUT_MS = 60_000;
/** A whole requirement set's bound, for the suite's guard and the run. */
const CELL_TIMEOUT_MS = 20 * 60_000;

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
    { encoding: "utf8" },
  );
  const scored = listing.split(/Client scenarios[^\n]*\n/)[1]?.split(/\n\s*\n/)[0] ?? "";
  const notScored = listing.split(/never scored:\n/)[1] ?? "";
  return [
    ...[...scored.matchAll(/^\s+- (\S+)$/gm)].map((match) => match[1]!),
    ...[...notScored.matchAll(/^\s+- (\S+) \[client\]$/gm)].map((match) => match[1]!),
  ];
}

/**
 * The scenarios where the suite accepts a client that exits with an error (it is expected to refuse), read from the
 * suite's scenario classes. Only a shortcut: a scenario missing here whose client exits with an error is run again
 * alone, where the suite itself decides.
 */
function scenariosAllowingClientError(): Set<string> {
  const source = readFileSync(conformance, "utf8");
  const scenarioClass =
    /this\.name=`([^`]+)`(?:,this\.\w+=(?:`[^`]*`|\{[^{}]*\}|[\w$.]+))*,this\.allowClientError=!0/g;
  return new Set([...source.matchAll(scenarioClass)].map((match) => match[1]!));
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  description?: string;
}
/** The checks each scenario saved under a results folder (`<scenario>-<timestamp>/checks.json`). */
function savedChecks(outputDir: string): Map<string, Check[]> {
  const checks = new Map<string, Check[]>();
  for (const entry of readdirSync(outputDir, { recursive: true, encoding: "utf8" })) {
    if (!entry.endsWith("checks.json")) continue;
    const folder = relative(outputDir, join(outputDir, entry, ".."));
    const scenario = folder
      .split("\\")
      .join("/")
      .replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
    checks.set(scenario, JSON.parse(readFileSync(join(outputDir, entry), "utf8")) as Check[]);
  }
  return checks;
}

/** Runs the suite's CLI with the driver's port and the cell in its env; resolves with its exit and output. */
function runSuite(args: string[], cell: string, driver: Driver, port: number) {
  return new Promise<{ passed: boolean; output: string }>((done) => {
    execFile(
      process.execPath,
      [conformance, "client", "--command", client, ...args],
      {
        cwd: root,
        maxBuffer: 64 * 1024 * 1024,
        timeout: CELL_TIMEOUT_MS,
        env: {
          ...process.env,
          CONFORMANCE_DRIVER: driver,
          CONFORMANCE_CELL: cell,
          CONFORMANCE_DRIVER_PORT: String(port),
        },
      },
      (error, stdout, stderr) => done({ passed: !error, output: `${stdout}${stderr}` }),
    );
  });
}

describe("MCP conformance suite, client scenarios, through the bridge", () => {
  const scenarios = Object.fromEntries(
    REQUIREMENT_SETS.map((revision) => [revision, clientScenarios(revision)]),
  ) as Record<(typeof REQUIREMENT_SETS)[number], string[]>;
  const allowsClientError = scenariosAllowingClientError();
  /** The driver's runs and the saved checks, by `"<revision> <driver>"` and scenario. */
  const runs = new Map<string, Map<string, ScenarioRun>>();
  const checks = new Map<string, Map<string, Check[]>>();
  const suiteOutput = new Map<string, string>();
  let port = 0;
  let stopDriver = () => {};

  beforeAll(async () => {
    const driver = await serveDriver({
      inTurn: gate(PARALLEL),
      runs: (request) => {
        const [revision, stdioDriver] = request.cell.split(" ") as [
          (typeof REQUIREMENT_SETS)[number],
          Driver,
        ];
        return !REQUIREMENT_SETS.includes(revision) || runsIn(revision, stdioDriver, request.scenario);
      },
      timeoutMs: SCENARIO_TIMEOUT_MS,
      onRun: (request, run) => {
        if (!runs.has(request.cell)) runs.set(request.cell, new Map());
        runs.get(request.cell)?.set(request.scenario, run);
      },
    });
    port = driver.port;
    stopDriver = () => driver.server.close();
    // One requirement set and driver at a time: the suite starts every scenario's client at once.
    for (const revision of REQUIREMENT_SETS) {
      for (const stdioDriver of DRIVERS) {
        const cell = `${revision} ${stdioDriver}`;
        const outputDir = mkdtempSync(join(tmpdir(), "cmb-conformance-"));
        try {
          const args = ["--requirements", revision, "--timeout", String(CELL_TIMEOUT_MS), "-o", outputDir];
          suiteOutput.set(cell, (await runSuite(args, cell, stdioDriver, port)).output);
          checks.set(cell, savedChecks(outputDir));
        } finally {
          rmSync(outputDir, { recursive: true, force: true });
        }
      }
    }
  }, 4 * CELL_TIMEOUT_MS);

  afterAll(() => stopDriver());

  it("knows the scenarios this project targets, and every expected failure is one of them", () => {
    for (const target of ["initialize", "tools_call", "sse-retry", "auth/metadata-default"]) {
      expect(scenarios["2025-11-25"]).toContain(target);
    }
    for (const target of ["http-custom-headers", "auth/iss-supported", "json-schema-ref-no-deref"]) {
      expect(scenarios["2026-07-28"]).toContain(target);
    }
    // The refusal scenarios are found, so a refusing client is not run a second time for nothing.
    for (const refusal of ["auth/resource-mismatch", "http-invalid-tool-headers"]) {
      expect(allowsClientError).toContain(refusal);
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
      const cell = `${revision} ${driver}`;
      describe(`requirement set ${revision}, ${driver} stdio driver`, () => {
        for (const scenario of scenarios[revision].filter((name) => runsIn(revision, driver, name))) {
          const reason = expectedReason(scenario, revision, driver);
          const title = reason
            ? `${scenario} (expected to fail: ${reason.slice(0, 60)}…)`
            : `${scenario} passes`;
          it(title, { timeout: 180_000 }, async () => {
            const saved = checks.get(cell)?.get(scenario);
            const run = runs.get(cell)?.get(scenario);
            const clean = saved?.every((check) => !["FAILURE", "WARNING"].includes(check.status)) === true;
            const batchPassed =
              clean && run !== undefined && (run.exitCode === 0 || allowsClientError.has(scenario));
            if (batchPassed === !reason) return;
            // Not what was expected in the batch: once more alone, where the suite's own verdict (its exit code)
            // decides, as a scenario that checks timing (sse-retry's `retry` delay) can be skewed by a loaded machine.
            const args = [
              "--scenario",
              scenario,
              "--spec-version",
              revision,
              "--force",
              "--timeout",
              "60000",
            ];
            const alone = await runSuite(args, `${cell} alone`, driver, port);
            const batch = [
              saved === undefined
                ? "no checks saved"
                : JSON.stringify(saved.filter((c) => c.status !== "SUCCESS")),
              run === undefined
                ? "the driver never ran it"
                : `client exit ${run.exitCode}: ${run.output.slice(-2000)}`,
              (suiteOutput.get(cell) ?? "").slice(-1000),
            ].join("\n");
            // An expected failure that starts passing must leave the list, as the suite's own baseline demands.
            expect(alone.passed, `${alone.output.slice(-3000)}\n--- in the batch:\n${batch}`).toBe(!reason);
          });
        }
      });
    }
  }
});
