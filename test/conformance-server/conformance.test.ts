/** The official MCP conformance suite's server scenarios against the reference server's `/mcp` (Node 22+ binary). */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ReferenceServer,
  type ReferenceServerOptions,
  startReferenceServer,
} from "../../src/server/index.js";
import type { McpEndpointOptions } from "../../src/server/mcp/index.js";
import { scratchDir } from "../support/scratch-dir.js";
import { startFixtureToolProxy } from "./fixture-tool-proxy.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const CONFORMANCE_CLI = join(repoRoot, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

type SpecVersion = "2025-11-25" | "2026-07-28";

/**
 * Scenarios that apply to a server whose features are our seven tools, per requirement set; all must pass (run with
 * `--spec-version`, so each speaks that revision to the dual-era `/mcp`).
 */
const SCENARIOS: Record<SpecVersion, string[]> = {
  "2025-11-25": [
    "server-initialize",
    "server-session-lifecycle",
    "ping",
    "tools-list",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
  ],
  "2026-07-28": [
    "server-stateless",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "caching",
    "http-header-validation",
    "http-custom-header-server-validation",
  ],
};

/**
 * Checks inside an applicable scenario that probe features we do not have: check id -> why. Every other check of the
 * scenario must pass.
 */
const NOT_APPLICABLE_CHECKS: Record<string, string> = {
  "sep-2549-prompts-list-caching-hints":
    "no prompts: prompts/list is -32601, as for any server without the capability",
  "sep-2549-resources-list-caching-hints": "no resources: resources/list is -32601",
  "sep-2549-resources-templates-list-caching-hints": "no resources: resources/templates/list is -32601",
  "sep-2575-server-rejects-undeclared-capability":
    "needs the suite's diagnostic tool test_missing_capability",
  "sep-2575-missing-capability-http-400": "needs the suite's diagnostic tool test_missing_capability",
  "sep-2575-http-server-no-independent-requests-on-stream":
    "needs the suite's diagnostic tool test_streaming_elicitation",
  "sep-2575-server-no-log-without-loglevel":
    "needs the suite's diagnostic tool test_logging_tool (we do not log to clients)",
};

/**
 * Server scenarios judged not applicable (why), for the record. They call diagnostic tools the suite names
 * (`test_simple_text`, `test_error_handling`, `json_schema_2020_12_tool`, `test_input_required_result_*`, ...) or
 * features this server does not offer:
 * - tools-call-* (simple-text, image, audio, embedded-resource, mixed-content, with-logging, error, sampling,
 *   elicitation), json-schema-2020-12, elicitation-sep1034-defaults, elicitation-sep1330-enums: each calls a tool of
 *   the suite's own test server by name; our seven tools are the chat service's. tools-call-with-progress is the
 *   exception, run below through an alias (PROGRESS_SCENARIO).
 * - input-required-result-* (13 scenarios): call `test_input_required_result_*` tools; our MRTR path (resolve_task
 *   without task) is covered by test/server/mcp/eras.test.ts with real SDK v2 clients of both eras instead.
 * - logging-set-level: no logging capability (SEP-2577 deprecates it).
 * - completion-complete, resources-*, sep-2164-resource-not-found, prompts-*: no completions, resources or prompts.
 * - sep-2640-skills-*, tasks-*: extensions this server does not implement.
 */

/**
 * `tools-call-with-progress` calls the suite's fixture `test_tool_with_progress` with a `progressToken` and has one
 * check, `tools-call-with-progress`: at least 3 `notifications/progress` for that token, the first three in
 * non-decreasing order. It says nothing of the fixture's own figures (0, 50, 100 of 100) or of its result, so it
 * applies to every tool of ours that waits for the assistant: the fixture's name is answered by `create_chat` on a
 * server whose assistant takes a second (fixture-tool-proxy.ts), in both eras.
 */
const PROGRESS_SCENARIO = {
  scenario: "tools-call-with-progress",
  alias: {
    fixture: "test_tool_with_progress",
    tool: "create_chat",
    args: { message: "Conformance: progress while the assistant works" },
  },
  assistantDelayMs: 1000,
};

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO";
  errorMessage?: string;
  details?: { progressCount?: number };
}

function runScenario(
  url: string,
  scenario: string,
  specVersion: SpecVersion,
  outputDir: string,
): Promise<{ exitCode: number; checks: Check[] }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        CONFORMANCE_CLI,
        "server",
        "--url",
        url,
        "--scenario",
        scenario,
        "--spec-version",
        specVersion,
        "--output-dir",
        outputDir,
      ],
      { timeout: 60_000 },
      (error) => {
        const runDir = readdirSync(outputDir).find((name) => name.includes(scenario));
        const checks = runDir
          ? (JSON.parse(readFileSync(join(outputDir, runDir, "checks.json"), "utf8")) as Check[])
          : [];
        resolve({ exitCode: error ? Number(error.code ?? 1) : 0, checks });
      },
    );
  });
}

describe("official MCP conformance suite, server scenarios, against /mcp", () => {
  let server: ReferenceServer;
  let outputRoot: string;

  beforeAll(async () => {
    // The suite cannot sign in: the clearly named test-only switch lets it reach /mcp as "personal".
    const options: ReferenceServerOptions & McpEndpointOptions = {
      testOnlyUnauthenticatedMcpAccount: "personal",
    };
    server = await startReferenceServer(options);
    outputRoot = scratchDir("mcp-conformance-");
  });

  afterAll(async () => {
    await server?.close();
    if (outputRoot) rmSync(outputRoot, { recursive: true, force: true });
  });

  for (const [specVersion, scenarios] of Object.entries(SCENARIOS) as Array<[SpecVersion, string[]]>) {
    for (const scenario of scenarios) {
      it(`${specVersion} ${scenario} passes`, async () => {
        const outputDir = mkdtempSync(join(outputRoot, `${specVersion}-${scenario}-`));
        const { exitCode, checks } = await runScenario(server.mcpUrl, scenario, specVersion, outputDir);
        const failures = checks.filter(
          (check) => check.status === "FAILURE" && !(check.id in NOT_APPLICABLE_CHECKS),
        );
        expect(failures).toEqual([]);
        expect(checks.filter((check) => check.status === "SUCCESS").length).toBeGreaterThan(0);
        const skippedFailures = checks.some((check) => check.status === "FAILURE");
        if (!skippedFailures) expect(exitCode).toBe(0);
      });
    }
  }
});

describe("official MCP conformance suite, tools-call-with-progress, through the fixture tool's alias", () => {
  let server: ReferenceServer;
  let proxy: Awaited<ReturnType<typeof startFixtureToolProxy>>;
  let outputRoot: string;

  beforeAll(async () => {
    server = await startReferenceServer({
      testOnlyUnauthenticatedMcpAccount: "personal",
      assistantDelayMs: PROGRESS_SCENARIO.assistantDelayMs,
    });
    proxy = await startFixtureToolProxy(server.mcpUrl, PROGRESS_SCENARIO.alias);
    outputRoot = scratchDir("mcp-conformance-progress-");
  });

  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    if (outputRoot) rmSync(outputRoot, { recursive: true, force: true });
  });

  for (const specVersion of ["2025-11-25", "2026-07-28"] as const) {
    it(`${specVersion} ${PROGRESS_SCENARIO.scenario} passes with create_chat as the fixture`, async () => {
      const outputDir = mkdtempSync(join(outputRoot, `${specVersion}-`));
      const { exitCode, checks } = await runScenario(
        proxy.url,
        PROGRESS_SCENARIO.scenario,
        specVersion,
        outputDir,
      );
      expect(checks.filter((check) => check.status !== "SUCCESS")).toEqual([]);
      const progress = checks.find((check) => check.id === "tools-call-with-progress");
      expect(progress?.status).toBe("SUCCESS");
      console.log(
        `${specVersion} tools-call-with-progress: ${JSON.stringify(progress?.details?.progressCount)} progress notifications`,
      );
      expect(exitCode).toBe(0);
    });
  }
});
