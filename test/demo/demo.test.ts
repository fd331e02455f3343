/** `npm run demo` in its headless mode (as CI runs it): both flows pass, the summary says so, and no secret reaches the terminal. */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const demo = resolve("dist/demo/index.js");

interface DemoRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function runDemo(args: string[]): Promise<DemoRun> {
  return run(process.execPath, [demo, ...args], {
    timeout: 90_000,
    env: { ...process.env, NO_COLOR: "" },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === "number" ? error.code : -1,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? "",
    }),
  );
}

beforeAll(() => {
  if (!existsSync(demo))
    throw new Error("dist/demo/index.js is missing: run `npm run build` first (npm test does)");
});

describe("the headless demo", () => {
  let result: DemoRun;
  beforeAll(async () => {
    result = await runDemo(["--headless"]);
  }, 120_000);

  it("exits 0 after every step of both flows passed", () => {
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const steps = [...result.stdout.matchAll(/^\s+([AB]\d+) {2}/gm)].map((match) => match[1]);
    expect(steps).toEqual([
      "A1",
      "A2",
      "A3",
      "A4",
      "A5",
      "A6",
      "A7",
      "A8",
      "A9",
      "B1",
      "B2",
      "B3",
      "B4",
      "B5",
      "B6",
    ]);
    expect(result.stdout.match(/✓ \d/g)?.length).toBe(steps.length);
    expect(result.stdout).toContain(`All ${steps.length} steps passed`);
  });

  it("says that it signs in headlessly, and why", () => {
    expect(result.stdout).toMatch(/Sign-in\s+headless, because --headless was given/);
  });

  it("prints each chat-cli command so the reader can repeat it", () => {
    expect(result.stdout).toMatch(/\$ chat-cli create '.*database.*'/);
    expect(result.stdout).toMatch(/\$ chat-cli resolve chat_\S+ --connected/);
    expect(result.stdout).toMatch(/\$ chat-cli resolve chat_\S+ --approve/);
    expect(result.stdout).toMatch(/\$ chat-cli preview chat_\S+/);
  });

  it("shows no API key, bearer token or sign-in secrets, and no colour when not on a terminal", () => {
    expect(result.stdout).not.toMatch(/chat_sk_|Bearer |access_token|refresh_token|code_verifier|state=/);
    expect(result.stdout).not.toContain("\u001b[");
  });
});

describe("the demo's command line", () => {
  it("--help prints usage and exits 0", async () => {
    const help = await runDemo(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--headless");
  });

  it("an unknown option is a usage error (exit 2)", async () => {
    const wrong = await runDemo(["--no-such-option"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--no-such-option");
  });
});

describe("a reader that stops early (`npm run demo | head -12`)", () => {
  it("still removes the demo's temp config folder", async () => {
    const child = spawn(process.execPath, [demo, "--headless"], {
      env: { ...process.env, NO_COLOR: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let seen = "";
    const configDir = await new Promise<string>((done, fail) => {
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        seen += chunk;
        const found = /Config dir\s+(\S+)/.exec(seen)?.[1];
        // As head does once it has its lines: the pipe closes, and the demo's next write meets EPIPE.
        if (found) {
          child.stdout.destroy();
          done(found);
        }
      });
      child.once("exit", () => fail(new Error(`the demo ended before naming its config dir:\n${seen}`)));
    });
    await new Promise((done) => child.once("close", done));
    expect(existsSync(configDir)).toBe(false);
  }, 120_000);
});
