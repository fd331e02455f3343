/** Atomic writes (src/internal/files.ts) on Windows, where a rename over a file another process holds open fails for a while. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileInUseError, renameReplacing, writeFileAtomic } from "../../src/internal/files.js";
import { scratchDir } from "../support/scratch-dir.js";

const failing = (code: string, times: number) => {
  let calls = 0;
  return {
    calls: () => calls,
    rename: (from: string, to: string) => {
      calls++;
      if (calls <= times)
        throw Object.assign(new Error(`${code}: operation not permitted, rename`), { code });
      renameReplacing(from, to, { platform: "linux" });
    },
  };
};

describe("renameReplacing retries on Windows while another process holds the target", () => {
  for (const code of ["EPERM", "EACCES", "EBUSY"]) {
    it(`${code} a few times, then the rename succeeds`, () => {
      const dir = scratchDir("cmb-files-");
      const pauses: number[] = [];
      const flaky = failing(code, 3);
      writeFileAtomic(join(dir, "login.json"), "new", {
        rename: { platform: "win32", rename: flaky.rename, pause: (ms) => pauses.push(ms) },
      });
      expect(readFileSync(join(dir, "login.json"), "utf8")).toBe("new");
      expect(flaky.calls()).toBe(4);
      expect(pauses).toEqual([10, 20, 40]);
    });
  }

  it("gives up after about a second with an error that says another process has the file, leaving no temp file", () => {
    const dir = scratchDir("cmb-files-");
    const pauses: number[] = [];
    const held = failing("EPERM", Number.POSITIVE_INFINITY);
    let thrown: unknown;
    try {
      writeFileAtomic(join(dir, "login.json"), "new", {
        rename: { platform: "win32", rename: held.rename, pause: (ms) => pauses.push(ms) },
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(FileInUseError);
    expect((thrown as Error).message).toMatch(/another process has .*login\.json open \(EPERM\)/);
    const waited = pauses.reduce((sum, ms) => sum + ms, 0);
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThanOrEqual(1_100);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("fails at once elsewhere: on POSIX these codes are a real permission problem", () => {
    const dir = scratchDir("cmb-files-");
    const denied = failing("EACCES", Number.POSITIVE_INFINITY);
    expect(() =>
      writeFileAtomic(join(dir, "login.json"), "new", {
        rename: { platform: "darwin", rename: denied.rename, pause: () => expect.unreachable() },
      }),
    ).toThrow(/EACCES/);
    expect(denied.calls()).toBe(1);
    expect(existsSync(join(dir, "login.json"))).toBe(false);
  });
});
