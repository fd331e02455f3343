/** Child processes for the bench: timed spawns, stdout lines, and memory read from /proc/<pid>/status. */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { nowMs } from "./stats.mjs";

/** VmRSS and VmHWM (peak) of `pid` in MiB, or null where /proc is not available. */
export function readMemory(pid) {
  let status;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return null;
  }
  const field = (name) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  };
  return { rssMiB: field("VmRSS"), peakRssMiB: field("VmHWM") };
}

/** Spawns `command args` with piped stdio and resolves with the wall time (ms) from spawn to exit. */
export function timeToExit(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const started = nowMs();
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.once("error", reject);
    child.once("close", (code) => {
      const ms = nowMs() - started;
      if (code !== 0) reject(new Error(`${command} ${args.join(" ")} exited with ${code}: ${stderr.trim()}`));
      else resolve({ ms, stdout });
    });
  });
}

/** Calls `onLine` for every newline-terminated line of `stream`. */
export function onLines(stream, onLine) {
  // The pieces of the line not yet ended: each chunk is searched once, so a 20 MB line costs its length, not its
  // length times the number of chunks it came in.
  let pieces = [];
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
      pieces.push(chunk.slice(start, newline));
      const line = pieces.join("");
      pieces = [];
      if (line.trim()) onLine(line);
      start = newline + 1;
    }
    if (start < chunk.length) pieces.push(chunk.slice(start));
  });
}

/** Resolves when `child` has exited (at once if it already has). */
export function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}
