/** The bridge's log file: ISO timestamp, pid and level on each line, one line per event, one rotation at the cap. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createBridgeLog } from "../../src/bridge/log/log.js";
import { LogFile } from "../../src/bridge/log/log-file.js";
import { scratchDir } from "../support/scratch-dir.js";

const newPath = () => join(scratchDir("cmb-log-"), "logs", "server.log");

describe("LogFile", () => {
  it("writes one line per event with an ISO timestamp, the pid and the level, owner-only", () => {
    const path = newPath();
    const file = new LogFile(path);
    file.write("info", "first");
    file.write("debug", "two\nlines\u001b[31m");
    file.close();
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z pid=${process.pid} info first$`),
    );
    expect(lines[1]).toMatch(/ debug two\^Jlines\^\[\[31m$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("a run with --profile names its profile on every line (several profiles may share one --log-file)", () => {
    const path = newPath();
    const file = new LogFile(path, undefined, { profile: "acme" });
    file.write("debug", 'client → server tools/call "list_chats" #3');
    file.close();
    expect(readFileSync(path, "utf8")).toMatch(
      new RegExp(
        `^\\S+Z pid=${process.pid} profile=acme debug client → server tools/call "list_chats" #3\\n$`,
      ),
    );
  });

  it("moves a full file to <path>.1, replacing the older one, and starts again", () => {
    const path = newPath();
    const file = new LogFile(path, 1000);
    for (let index = 0; index < 60; index++) file.write("debug", `event ${index} ${"x".repeat(40)}`);
    file.close();
    expect(statSync(path).size).toBeLessThanOrEqual(1000);
    expect(statSync(`${path}.1`).size).toBeLessThanOrEqual(1000);
    expect(existsSync(`${path}.2`)).toBe(false);
    expect(readFileSync(path, "utf8")).toContain("event 59 ");
    expect(readFileSync(`${path}.1`, "utf8")).not.toContain("event 0 ");
  });
});

describe("createBridgeLog", () => {
  it("--silent: nothing on stderr; the file still gets every event", () => {
    const path = newPath();
    const file = new LogFile(path);
    const stderr: string[] = [];
    const log = createBridgeLog({ debug: true, silent: true, file, write: (line) => stderr.push(line) });
    log.info("an info");
    log.debug("a detail");
    log.fatal?.("the end");
    expect(stderr).toEqual([]);
    expect(log.debugEnabled).toBe(true);
    expect(readFileSync(path, "utf8")).toMatch(/info an info\n.*debug a detail\n.*fatal the end\n$/);
  });

  it("without --debug or a file: infos on stderr, details nowhere", () => {
    const stderr: string[] = [];
    const log = createBridgeLog({ debug: false, write: (line) => stderr.push(line) });
    log.info("an info");
    log.debug("a detail");
    expect(log.debugEnabled).toBe(false);
    expect(stderr).toEqual(["chat-mcp-bridge: an info\n"]);
  });
});
