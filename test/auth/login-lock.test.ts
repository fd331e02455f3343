import { spawn, spawnSync } from "node:child_process";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { acquireLoginLock } from "../../src/auth/login-lock.js";
import { scratchDir } from "../support/scratch-dir.js";
import { buildChildScript } from "./fixtures/build-child.js";

let child: string;
beforeAll(async () => {
  child = await buildChildScript(resolve("test/auth/fixtures/lock-child.ts"));
});

function run(args: string[]): Promise<number> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, [child, ...args], { stdio: ["ignore", "ignore", "inherit"] });
    proc.once("error", fail);
    proc.once("exit", (code) => done(code ?? 1));
  });
}

describe("lock: concurrent acquire in several processes", () => {
  it("gives the lock to one holder at a time", async () => {
    const dir = scratchDir("cmb-lock-");
    const lock = join(dir, "login.lock");
    const log = join(dir, "log.txt");
    const codes = await Promise.all(Array.from({ length: 4 }, () => run([lock, log, "150"])));
    expect(codes).toEqual([0, 0, 0, 0]);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(8);
    for (let i = 0; i < lines.length; i += 2) {
      const [start, startPid] = lines[i]!.split(" ");
      const [end, endPid] = lines[i + 1]!.split(" ");
      expect([start, end]).toEqual(["start", "end"]);
      expect(endPid).toBe(startPid);
    }
  });
});

describe("lock: stale lock recovery", () => {
  it("takes over a lock whose holder process is gone", async () => {
    const dir = scratchDir("cmb-lock-");
    const lock = join(dir, "login.lock");
    const dead = spawnSync(process.execPath, [
      "-e",
      "process.stdout.write(String(process.pid))",
    ]).stdout.toString();
    writeFileSync(lock, JSON.stringify({ pid: Number(dead), token: "old", createdAt: Date.now() }));
    const release = await acquireLoginLock(lock, { waitMs: 5_000 });
    expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(process.pid);
    await release();
  });

  it("takes over a lock whose heartbeat stopped long ago, even if the pid is alive", async () => {
    const dir = scratchDir("cmb-lock-");
    const lock = join(dir, "login.lock");
    writeFileSync(lock, JSON.stringify({ pid: process.ppid, token: "old", createdAt: 0 }));
    const longAgo = new Date(Date.now() - 10 * 60_000);
    utimesSync(lock, longAgo, longAgo);
    const release = await acquireLoginLock(lock, { waitMs: 5_000, staleMs: 30_000 });
    expect(JSON.parse(readFileSync(lock, "utf8")).token).not.toBe("old");
    await release();
  });

  it("waits for a live, fresh holder and gives up with a clear message", async () => {
    const dir = scratchDir("cmb-lock-");
    const lock = join(dir, "login.lock");
    const release = await acquireLoginLock(lock, { waitMs: 1_000 });
    await expect(acquireLoginLock(lock, { waitMs: 200 })).rejects.toThrow(
      /Timed out waiting for another process/,
    );
    await release();
  });
});
