/**
 * Another local user plants something where the bridge's log file goes (`--log-file` in a shared folder, or the
 * default one under the config dir): a link to the person's `.bashrc`, a file or folder of their own, a FIFO, a hard
 * link. The bridge refuses each with a message saying what is wrong and what to do, and writes nothing through it;
 * the person's own files and folders keep working.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultLogFilePath, LogFile } from "../../src/bridge/log/log-file.js";
import { needs } from "../support/requirements.js";
import { scratchDir } from "../support/scratch-dir.js";

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const posix = process.platform !== "win32";
const otherUser = needs(
  "another uid",
  !posix
    ? "Windows has no uids"
    : isRoot
      ? undefined
      : "running the attacker as another user needs root (the suite runs as an ordinary user)",
);

/** Runs a coreutils command as `nobody` when the suite is root, else as this user (a link is refused either way). */
function asAttacker(command: string, args: string[]): void {
  const run = spawnSync(command, args, {
    encoding: "utf8",
    ...(isRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  if (run.status !== 0) throw new Error(`${command} ${args.join(" ")}: ${run.stderr}`);
}

/** A folder like /tmp (world-writable, sticky) and, beside it, the person's home with a `.bashrc`. */
function sharedFolderAndBashrc() {
  const root = scratchDir("cmb-log-planted-");
  chmodSync(root, 0o755);
  const shared = join(root, "shared");
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  const home = join(root, "home");
  mkdirSync(home, { mode: 0o755 });
  const bashrc = join(home, ".bashrc");
  writeFileSync(bashrc, "export PATH=/usr/bin\n", { mode: 0o644 });
  return { root, shared, home, bashrc };
}

function expectRefused(path: string, message: RegExp): void {
  let error: unknown;
  try {
    new LogFile(path).close();
  } catch (caught) {
    error = caught;
  }
  expect(error, `${path} was opened`).toBeInstanceOf(Error);
  expect((error as Error).message).toMatch(message);
}

describe.skipIf(!posix)("A link another user planted where the log file goes", () => {
  it("a symbolic link to the person's .bashrc in a shared sticky folder: refused, .bashrc untouched", () => {
    const { shared, bashrc } = sharedFolderAndBashrc();
    const planted = join(shared, "bridge.log");
    asAttacker("ln", ["-s", bashrc, planted]);
    expectRefused(planted, /is a symbolic link.*choose another --log-file/);
    expect(readFileSync(bashrc, "utf8")).toBe("export PATH=/usr/bin\n");
  });

  it("the default log file under the config dir, replaced by a link: refused, the target untouched", () => {
    const { root, bashrc } = sharedFolderAndBashrc();
    const path = defaultLogFilePath(join(root, "config"), "server-key");
    mkdirSync(join(root, "config", "logs"), { recursive: true, mode: 0o700 });
    symlinkSync(bashrc, path);
    expectRefused(path, /is a symbolic link/);
    expect(readFileSync(bashrc, "utf8")).toBe("export PATH=/usr/bin\n");
  });

  it("a hard link to the person's file: refused, the file untouched", () => {
    const { root, bashrc } = sharedFolderAndBashrc();
    const logs = join(root, "logs");
    mkdirSync(logs, { mode: 0o700 });
    const linked = join(logs, "bridge.log");
    linkSync(bashrc, linked);
    expectRefused(linked, /has 2 names \(hard links\)/);
    expect(readFileSync(bashrc, "utf8")).toBe("export PATH=/usr/bin\n");
  });

  it("a FIFO: refused at once instead of hanging the bridge on open", () => {
    const { shared } = sharedFolderAndBashrc();
    const fifo = join(shared, "bridge.log");
    asAttacker("mkfifo", [fifo]);
    expectRefused(fifo, /is not a regular file/);
  });

  it("a folder others can write that is not sticky: refused (its file could be swapped for a link)", () => {
    const { root } = sharedFolderAndBashrc();
    const open = join(root, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expectRefused(join(open, "bridge.log"), /folder .*open: it can be written by other users.*not sticky/);
    expect(existsSync(join(open, "bridge.log"))).toBe(false);
  });
});

describe.skipIf(!posix)("A rotation that finds the name no longer safe", () => {
  it("stops logging instead of opening what it would refuse at start, and never throws into the relay", () => {
    const { root } = sharedFolderAndBashrc();
    const folder = join(root, "logs");
    mkdirSync(folder, { mode: 0o700 });
    const path = join(folder, "bridge.log");
    const file = new LogFile(path, 400);
    file.write("info", "before");
    // Others may now write the folder: the file could be swapped for a link between the rename and the reopening.
    chmodSync(folder, 0o777);
    for (let index = 0; index < 10; index++) file.write("info", `event ${index} ${"x".repeat(40)}`);
    file.close();
    expect(readFileSync(`${path}.1`, "utf8")).toContain("before");
    expect(existsSync(path)).toBe(false);
  });
});

describe("Files and folders another user owns", otherUser, () => {
  it("a log file another user made first in a shared folder: refused, naming its owner", () => {
    const { shared } = sharedFolderAndBashrc();
    const theirs = join(shared, "bridge.log");
    asAttacker("touch", [theirs]);
    asAttacker("chmod", ["666", theirs]);
    expectRefused(theirs, new RegExp(`belongs to uid ${NOBODY}, not to you`));
    expect(statSync(theirs).size).toBe(0);
  });

  it("a folder another user made in a shared folder: refused, naming its owner", () => {
    const { shared } = sharedFolderAndBashrc();
    const theirs = join(shared, "logs");
    asAttacker("mkdir", ["-m", "777", theirs]);
    expectRefused(join(theirs, "bridge.log"), new RegExp(`folder .*logs: it belongs to uid ${NOBODY}`));
    expect(existsSync(join(theirs, "bridge.log"))).toBe(false);
  });

  it("a link to the folder, made by another user: refused", () => {
    const { shared, home } = sharedFolderAndBashrc();
    const linkedFolder = join(shared, "logs");
    asAttacker("ln", ["-s", home, linkedFolder]);
    expectRefused(
      join(linkedFolder, "bridge.log"),
      new RegExp(`folder .*logs: it is a link of uid ${NOBODY}`),
    );
    expect(existsSync(join(home, "bridge.log"))).toBe(false);
  });
});

describe.skipIf(!posix)("The person's own log files keep working", () => {
  it("a new file in a new folder (the default place): created 0600 in a 0700 folder", () => {
    const { root } = sharedFolderAndBashrc();
    const path = defaultLogFilePath(join(root, "config"), "server-key");
    const file = new LogFile(path);
    file.write("info", "hello");
    file.close();
    expect(readFileSync(path, "utf8")).toMatch(/ info hello\n$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, "config", "logs")).mode & 0o777).toBe(0o700);
  });

  it("an existing file of the person's (0644) in a 0700 folder: appended to", () => {
    const { root } = sharedFolderAndBashrc();
    const folder = join(root, "private");
    mkdirSync(folder, { mode: 0o700 });
    const path = join(folder, "bridge.log");
    writeFileSync(path, "earlier line\n", { mode: 0o644 });
    const file = new LogFile(path);
    file.write("info", "later");
    file.close();
    expect(readFileSync(path, "utf8")).toMatch(/^earlier line\n.* info later\n$/);
  });

  it("the person's own new file in a shared sticky folder (like /tmp): created and written", () => {
    const { shared } = sharedFolderAndBashrc();
    const path = join(shared, "bridge.log");
    const file = new LogFile(path);
    file.write("info", "shared folder");
    file.close();
    expect(readFileSync(path, "utf8")).toMatch(/ info shared folder\n$/);
  });

  it("directly in the system's temp folder (owned by root, sticky)", () => {
    const path = join(tmpdir(), `cmb-log-${process.pid}-${Date.now()}.log`);
    try {
      const file = new LogFile(path);
      file.write("info", "in tmp");
      file.close();
      expect(readFileSync(path, "utf8")).toMatch(/ info in tmp\n$/);
    } finally {
      rmSync(path, { force: true });
    }
  });
});
