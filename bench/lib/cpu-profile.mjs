/** Reads a V8 `.cpuprofile` (from `node --cpu-prof`) and names where the time went: top functions and top modules by self time. */
import { readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

function fileSize(url) {
  try {
    return statSync(fileURLToPath(url)).size;
  } catch {
    return 0;
  }
}

/** A short place for a script URL: `pkg/file` under node_modules, the path under the repo, or `node:...`. */
function shortPlace(url) {
  if (!url) return "(native)";
  const clean = url.replace(/^file:\/\//, "");
  const inModules = clean.lastIndexOf("node_modules/");
  if (inModules !== -1) return clean.slice(inModules + "node_modules/".length);
  const inRepo = clean.search(/\/(dist|src|bench|bin)\//);
  return inRepo === -1 ? clean : clean.slice(inRepo + 1);
}

/** The package (or repo folder) a script belongs to, for grouping. */
function moduleOf(url) {
  const place = shortPlace(url);
  if (place.startsWith("node:")) return "node: internals";
  if (place.startsWith("(")) return place;
  const parts = place.split("/");
  if (url.includes("node_modules/")) return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
  return parts.slice(0, Math.min(3, parts.length - 1)).join("/") || place;
}

/**
 * `{ totalMs, functions, modules, packageFunctions }`: functions and modules by self time, and functions of the
 * package and its dependencies (not Node's internals) by total time, i.e. including what they call.
 */
export function summarizeCpuProfile(path, top = 12) {
  const profile = JSON.parse(readFileSync(path, "utf8"));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfById = new Map();
  profile.samples.forEach((id, index) => {
    selfById.set(id, (selfById.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const keyOf = (frame) =>
    `${frame.functionName || "(anonymous)"} ${frame.url ? `${shortPlace(frame.url)}:${frame.lineNumber + 1}` : ""}`;
  const byFunction = new Map();
  const byModule = new Map();
  const inclusive = new Map();
  let totalUs = 0;
  for (const [id, us] of selfById) {
    const frame = nodes.get(id).callFrame;
    if (frame.functionName === "(idle)") continue;
    totalUs += us;
    const name = frame.functionName || "(anonymous)";
    const place = frame.url ? `${shortPlace(frame.url)}:${frame.lineNumber + 1}` : "";
    const key = keyOf(frame);
    const entry = byFunction.get(key) ?? { name, place, selfUs: 0 };
    entry.selfUs += us;
    byFunction.set(key, entry);
    const module = frame.url ? moduleOf(frame.url) : name;
    byModule.set(module, (byModule.get(module) ?? 0) + us);
    // Every distinct package function on the stack gets the sample's time once (recursion counted once).
    const seen = new Set();
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const callFrame = nodes.get(at).callFrame;
      if (!callFrame.url || callFrame.url.startsWith("node:")) continue;
      const stackKey = keyOf(callFrame);
      if (seen.has(stackKey)) continue;
      seen.add(stackKey);
      inclusive.set(stackKey, (inclusive.get(stackKey) ?? 0) + us);
    }
  }
  // The package's and its dependencies' scripts the process loaded, largest first: what start-up had to compile.
  const scripts = [...new Set(profile.nodes.map((node) => node.callFrame.url))]
    .filter((url) => url.startsWith("file://"))
    .map((url) => ({ script: shortPlace(url), bytes: fileSize(url) }))
    .sort((a, b) => b.bytes - a.bytes);
  const percent = (us) => Math.round((1000 * us) / (totalUs || 1)) / 10;
  return {
    totalMs: totalUs / 1000,
    functions: [...byFunction.values()]
      .sort((a, b) => b.selfUs - a.selfUs)
      .slice(0, top)
      .map(({ name, place, selfUs }) => ({ name, place, selfMs: selfUs / 1000, percent: percent(selfUs) })),
    modules: [...byModule.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([module, us]) => ({ module, selfMs: us / 1000, percent: percent(us) })),
    scripts,
    packageFunctions: [...inclusive.entries()]
      .filter(([key]) => !/^\(anonymous\) \S+:1$/.test(key))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => ({ function: key, totalMs: us / 1000, percent: percent(us) })),
  };
}

/** The summary as indented text lines for the report. */
export function formatCpuSummary(title, summary, top = 8) {
  const lines = [`${title} (${summary.totalMs.toFixed(0)} ms on CPU, idle excluded)`];
  lines.push("  top functions by self time:");
  for (const entry of summary.functions.slice(0, top)) {
    lines.push(
      `    ${entry.percent.toFixed(1).padStart(5)}%  ${entry.selfMs.toFixed(1).padStart(7)} ms  ${entry.name}  ${entry.place}`,
    );
  }
  lines.push("  package and dependency functions by total time (self + callees):");
  for (const entry of summary.packageFunctions.slice(0, top)) {
    lines.push(
      `    ${entry.percent.toFixed(1).padStart(5)}%  ${entry.totalMs.toFixed(1).padStart(7)} ms  ${entry.function}`,
    );
  }
  const scriptBytes = summary.scripts.reduce((sum, entry) => sum + entry.bytes, 0);
  lines.push(
    `  scripts run (of this package and its dependencies): ${summary.scripts.length}, ${(scriptBytes / 1024).toFixed(0)} KiB; largest:`,
  );
  for (const entry of summary.scripts.slice(0, 5)) {
    lines.push(`    ${(entry.bytes / 1024).toFixed(0).padStart(6)} KiB  ${entry.script}`);
  }
  lines.push("  self time by module:");
  for (const entry of summary.modules.slice(0, top)) {
    lines.push(
      `    ${entry.percent.toFixed(1).padStart(5)}%  ${entry.selfMs.toFixed(1).padStart(7)} ms  ${entry.module}`,
    );
  }
  return lines.join("\n");
}
