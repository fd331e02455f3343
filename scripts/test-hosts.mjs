// `npm run test:hosts [host...] [--runs N]`: the coding CLIs' cells (test/host-clis), each host in its own
// loopback-only network namespace (`unshare --net`, its own 127.0.0.1), side by side. A host that cannot run here is
// skipped with its reason; with CHAT_TEST_STRICT=1 a skip fails the run. Ends with per-cell pass counts.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureHost, HOSTS } from "./install-hosts.mjs";
import { testCacheDir } from "./node-release.mjs";

const root = fileURLToPath(new URL("../", import.meta.url));
const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 1;
const picked = args.filter((arg, i) => !arg.startsWith("--") && (runsAt < 0 || i !== runsAt + 1));
const strict = process.env.CHAT_TEST_STRICT === "1";
const cells = HOSTS.filter(
  (host) => host.name !== "mcp-remote" && (picked.length === 0 || picked.includes(host.name)),
);
/** What the hosts start: the bridge, or mcp-remote 0.15.1 for docs/hosts.md's comparison. */
const server = process.env.CHAT_HOSTS_SERVER === "mcp-remote" ? "mcp-remote" : "bridge";
const out = join(testCacheDir(), "host-runs", `${new Date().toISOString().replace(/[:.]/g, "-")}-${server}`);
mkdirSync(out, { recursive: true });

/** Why no host can run here, or undefined: a loopback-only namespace needs Linux, unshare and the right to use it. */
function namespaceMissing() {
  if (process.platform !== "linux") return `network namespaces are Linux only (this is ${process.platform})`;
  const probe = spawnSync("unshare", ["--net", "--fork", "--", "sh", "-c", "ip link set lo up"], {
    encoding: "utf8",
  });
  if (probe.error)
    return `unshare could not start: ${probe.error.message} (apt-get install util-linux iproute2)`;
  if (probe.status !== 0)
    return `unshare --net failed: ${probe.stderr.trim()} (run as root, or allow user namespaces)`;
  return undefined;
}

/** One host's cells, once, in a namespace of its own; resolves with vitest's JSON report (or why there is none). */
function runHostFile(host, run) {
  const report = join(out, `${host.name}-${run}.json`);
  const log = join(out, `${host.name}-${run}.log`);
  const vitest = [
    process.execPath,
    join(root, "node_modules/vitest/vitest.mjs"),
    "run",
    "--config",
    "vitest.hosts.config.ts",
  ];
  const command = `ip link set lo up && exec "$@"`;
  const child = spawn(
    "unshare",
    [
      "--net",
      "--fork",
      "--",
      "sh",
      "-c",
      command,
      "sh",
      ...vitest,
      `test/host-clis/${host.name}.cells.ts`,
      "--no-color",
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${report}`,
    ],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  let text = "";
  child.stdout.on("data", (chunk) => (text += chunk));
  child.stderr.on("data", (chunk) => (text += chunk));
  return new Promise((done) =>
    child.on("close", (code) => {
      writeFileSync(log, text);
      const notes = text
        .split("\n")
        .filter((line) => line.startsWith("HOSTS-NOTE "))
        .map((line) => line.slice(11));
      writeFileSync(
        join(out, `${host.name}-${run}.notes.jsonl`),
        notes.length ? `${notes.join("\n")}\n` : "",
      );
      done(
        existsSync(report) ? { report: JSON.parse(readFileSync(report, "utf8")), code, log } : { code, log },
      );
    }),
  );
}

const started = Date.now();
const missing = namespaceMissing();
/** cell -> host -> { passed, failed, skipped, reasons } */
const table = new Map();
const count = (cell, host, key, reason) => {
  if (!table.has(cell)) table.set(cell, new Map());
  const row = table.get(cell);
  if (!row.has(host)) row.set(host, { passed: 0, failed: 0, skipped: 0, reasons: new Set() });
  const entry = row.get(host);
  entry[key]++;
  if (reason) entry.reasons.add(reason);
};
const skips = [];
let totals = { passed: 0, failed: 0, skipped: 0 };

if (missing) {
  for (const host of cells) skips.push(`${host.name}: ${missing}`);
} else {
  spawnSync(process.execPath, [join(root, "scripts/build-if-stale.mjs")], { cwd: root, stdio: "inherit" });
  const runnable = [];
  for (const host of cells) {
    try {
      ensureHost(host);
      runnable.push(host);
    } catch (error) {
      skips.push(`${host.name}: not installed: ${error.message}`);
    }
  }
  // Each host's runs one after another; the hosts side by side, each in its own namespace, CHAT_HOSTS_PARALLEL
  // (default 2) at once: each host file runs three host processes, a bridge each and Chromium.
  const parallel = Math.max(1, Number(process.env.CHAT_HOSTS_PARALLEL) || 2);
  const queue = [...runnable];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let host = queue.shift(); host; host = queue.shift()) await runHost(host);
    }),
  );
  async function runHost(host) {
    for (let run = 1; run <= runs; run++) {
      const { report, code, log } = await runHostFile(host, run);
      if (!report) {
        count("(the file)", host.name, "failed", `vitest exited ${code} with no report: ${log}`);
        totals.failed++;
        continue;
      }
      for (const file of report.testResults) {
        for (const test of file.assertionResults) {
          const key = test.status === "passed" ? "passed" : test.status === "failed" ? "failed" : "skipped";
          count(
            test.title,
            host.name,
            key,
            key === "failed" ? test.failureMessages?.[0]?.split("\n")[0] : undefined,
          );
          totals[key]++;
          if (key === "skipped")
            skips.push(`${host.name}: ${test.title}: ${test.meta?.skipReason ?? "skipped"}`);
        }
      }
      process.stdout.write(`${host.name} run ${run}: exit ${code} (${log})\n`);
    }
  }
}

const hostNames = cells.map((host) => host.name);
const lines = [`| cell | ${hostNames.join(" | ")} |`, `| --- |${hostNames.map(() => " --- |").join("")}`];
for (const [cell, row] of table) {
  const marks = hostNames.map((name) => {
    const entry = row.get(name);
    if (!entry) return "";
    const ran = entry.passed + entry.failed;
    return entry.skipped && !ran ? "skipped" : `${entry.passed}/${ran}`;
  });
  lines.push(`| ${cell} | ${marks.join(" | ")} |`);
}
const failures = [...table].flatMap(([cell, row]) =>
  [...row]
    .filter(([, entry]) => entry.failed)
    .map(([host, entry]) => `${host}: ${cell}: ${[...entry.reasons].join(" / ")}`),
);
const wall = Math.round((Date.now() - started) / 1000);
const summary = `server: ${server}, ${runs} run(s) per host\n\n${lines.join("\n")}\n\n${failures.map((f) => `FAILED ${f}`).join("\n")}\n${skips.map((s) => `SKIPPED ${s}`).join("\n")}\n`;
writeFileSync(join(out, "summary.md"), summary);
process.stdout.write(`\n${summary}\nwall time ${wall} s; reports, logs and notes in ${out}\n`);
if (missing) totals = { ...totals, skipped: totals.skipped + cells.length };
process.stdout.write(`hosts: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
if (skips.length && strict)
  process.stdout.write("CHAT_TEST_STRICT=1: a skipped host or cell fails the run\n");
process.exit(totals.failed || (strict && skips.length) ? 1 : 0);
