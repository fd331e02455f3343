/** The bench's output: one row per figure with its baseline, difference, ratio and target, as a table and as JSON. */

const ms = (value) =>
  Number.isFinite(value) ? `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms` : "n/a";
const mb = (value) => (Number.isFinite(value) ? `${value.toFixed(1)} MB` : "n/a");
const perSecond = (value) =>
  Number.isFinite(value) ? `${Math.round(value).toLocaleString("en-US")}/s` : "n/a";

/**
 * A row: `value` beside `baseline` (same unit), with `target` `{ op: "<=" | ">=", limit, on: "value" | "diff" | "ratio" }`.
 * The difference and ratio are value - baseline and value / baseline.
 */
function row(figure, metric, unit, value, baseline, baselineName, target) {
  const diff = Number.isFinite(baseline) ? value - baseline : Number.NaN;
  const ratio = Number.isFinite(baseline) && baseline !== 0 ? value / baseline : Number.NaN;
  let status = "-";
  if (target) {
    const subject = { value, diff, ratio }[target.on];
    if (!Number.isFinite(subject)) status = "n/a";
    else status = (target.op === "<=" ? subject <= target.limit : subject >= target.limit) ? "met" : "MISSED";
  }
  return { figure, metric, unit, value, baseline, baselineName, diff, ratio, target, status };
}

const format = {
  ms,
  MB: mb,
  "calls/s": perSecond,
  "req/s": perSecond,
  calls: (value) => String(value),
  s: (value) => (Number.isFinite(value) ? `${value.toFixed(1)} s` : "n/a"),
  packages: (value) => (Number.isFinite(value) ? String(value) : "n/a"),
};

function describeTarget(target, unit) {
  if (!target) return "";
  const limit = target.on === "ratio" ? `${target.limit}x` : format[unit](target.limit);
  const subject = { value: "", diff: "diff ", ratio: "ratio " }[target.on];
  return `${subject}${target.op === "<=" ? "<=" : ">="} ${limit}`;
}

/** Builds every row from the figures that ran; a figure that did not run gives no rows (see `skipped`). */
export function buildRows(figures) {
  const rows = [];
  const start = figures.bridgeStart;
  if (start) {
    const floor = start.nodeFloorMs;
    rows.push(
      row(
        "1 bridge start",
        "spawn -> initialize, median",
        "ms",
        start.initializeMs.median,
        floor.median,
        "node -e 0",
        {
          op: "<=",
          limit: 250,
          on: "value",
        },
      ),
      row("1 bridge start", "spawn -> initialize, p90", "ms", start.initializeMs.p90, floor.p90, "node -e 0"),
      row(
        "1 bridge start",
        "spawn -> tools/list, median",
        "ms",
        start.toolsListMs.median,
        floor.median,
        "node -e 0",
      ),
      row("1 bridge start", "spawn -> tools/list, p90", "ms", start.toolsListMs.p90, floor.p90, "node -e 0"),
      row(
        "1 bridge start",
        "peak RSS after tools/list, median",
        "MB",
        start.idlePeakRssMB.median,
        start.nodeFloorRssMB,
        "node -e 0",
      ),
    );
    if (start.nodeFloorWithoutExtraCaMs) {
      rows.push(
        row(
          "1 bridge start",
          "node -e 0 without $NODE_EXTRA_CA_CERTS (set here), median",
          "ms",
          start.nodeFloorWithoutExtraCaMs.median,
          floor.median,
          "node -e 0",
        ),
      );
    }
  }
  const overhead = figures.relayOverhead;
  if (overhead) {
    for (const [quantile, target] of [
      ["median", { op: "<=", limit: 0.3, on: "diff" }],
      ["p90", undefined],
      ["p99", { op: "<=", limit: 1.5, on: "diff" }],
    ]) {
      rows.push(
        row(
          "2 relay overhead",
          `tools/call get_chat ${quantile === "median" ? "p50" : quantile} (n=${overhead.bridgeMs.n})`,
          "ms",
          overhead.bridgeMs[quantile],
          overhead.directMs[quantile],
          "direct SDK client",
          target,
        ),
      );
    }
  }
  const load = figures.relayConcurrency;
  if (load) {
    rows.push(
      row(
        "3 relay load",
        `answered of ${load.sent} (lost ${load.sent - load.answered}, mismatched ${load.mismatched}, failed ${load.failed})`,
        "calls",
        load.answered,
        load.sent,
        "sent",
        {
          op: ">=",
          limit: load.sent,
          on: "value",
        },
      ),
      row(
        "3 relay load",
        `calls/s, ${load.concurrency} in flight`,
        "calls/s",
        load.callsPerSecond,
        load.direct?.callsPerSecond,
        load.direct?.failed ? `direct SDK client, ${load.direct.failed} failed` : "direct SDK client",
      ),
      row("3 relay load", "peak RSS (VmHWM)", "MB", load.peakRssMB, load.nodeFloorRssMB, "node -e 0", {
        op: "<=",
        limit: 80,
        on: "value",
      }),
      row(
        "3 relay load",
        `RSS after ${load.sent.toLocaleString("en-US")} calls`,
        "MB",
        load.rssAfterLastWaveMB,
        load.rssAfterFirstWaveMB,
        `after ${load.concurrency.toLocaleString("en-US")}`,
        {
          op: "<=",
          limit: 1.1,
          on: "ratio",
        },
      ),
    );
  }
  const cli = figures.cli;
  if (cli) {
    rows.push(
      row(
        "4 chat-cli",
        "--version, median",
        "ms",
        cli.versionMs.median,
        cli.nodeFloorMs.median,
        "node -e 0",
        { op: "<=", limit: 150, on: "value" },
      ),
      row(
        "4 chat-cli",
        "list --json, median",
        "ms",
        cli.listJsonMs.median,
        cli.nodeFloorMs.median,
        "node -e 0",
        { op: "<=", limit: 350, on: "value" },
      ),
    );
  }
  const client = figures.chatClient;
  if (client) {
    rows.push(
      row(
        "5 ChatClient",
        `getChat, median (n=${client.chatClientMs.n})`,
        "ms",
        client.chatClientMs.median,
        client.rawFetchMs.median,
        "raw fetch",
        {
          op: "<=",
          limit: 1.1,
          on: "ratio",
        },
      ),
      row("5 ChatClient", "getChat, p90", "ms", client.chatClientMs.p90, client.rawFetchMs.p90, "raw fetch"),
    );
  }
  const server = figures.server;
  if (server) {
    rows.push(
      row(
        "6 server",
        `GET /v2/chats/{id}, ${server.reference.connections} conns, ${server.reference.seconds} s`,
        "req/s",
        server.reference.requestsPerSecond,
        server.floor?.requestsPerSecond,
        "bare node:http",
        {
          op: ">=",
          limit: 2000,
          on: "value",
        },
      ),
    );
  }
  const install = figures.install;
  if (install) {
    const [by, base, baseName] = [install.default, install.omitOptional, "--omit=optional"];
    rows.push(
      row("7 install", "npm install <tarball>, warm cache", "s", by.seconds, base.seconds, baseName),
      row(
        "7 install",
        "top-level packages",
        "packages",
        by.topLevelPackages,
        base.topLevelPackages,
        baseName,
      ),
      row("7 install", "packages in the tree", "packages", by.treePackages, base.treePackages, baseName, {
        op: "<=",
        limit: 89,
        on: "value",
      }),
      row("7 install", "size on disk", "MB", by.diskMB, base.diskMB, baseName),
      row(
        "7 install",
        "packages with install scripts",
        "packages",
        by.withInstallScripts.length,
        base.withInstallScripts.length,
        baseName,
        { op: "<=", limit: 0, on: "value" },
      ),
    );
  }
  return rows;
}

/** The rows as an aligned plain-text table. */
export function formatTable(rows) {
  const header = ["figure", "metric", "measured", "baseline", "diff", "ratio", "target", "status"];
  const lines = rows.map((r) => [
    r.figure,
    r.metric,
    format[r.unit](r.value),
    Number.isFinite(r.baseline) ? `${format[r.unit](r.baseline)} (${r.baselineName})` : "-",
    Number.isFinite(r.diff) ? `${r.diff >= 0 ? "+" : "-"}${format[r.unit](Math.abs(r.diff))}` : "-",
    Number.isFinite(r.ratio) ? `${r.ratio.toFixed(2)}x` : "-",
    describeTarget(r.target, r.unit),
    r.status,
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...lines.map((line) => line[column].length)),
  );
  const render = (cells) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(" | ")} |`;
  return [
    render(header),
    `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`,
    ...lines.map(render),
  ].join("\n");
}
