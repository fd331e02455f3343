import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { openUrl, splitCommandWords, UnsafeUrlError } from "../../src/auth/index.js";
import { scratchDir } from "../support/scratch-dir.js";

/** The real spawn, with its calls recorded: a refused URL must start no process at all. */
const spawned = vi.hoisted(() => ({ calls: 0, exits: [] as Promise<unknown>[] }));
vi.mock(import("node:child_process"), async (importOriginal) => {
  const original = await importOriginal();
  const spawn = ((...args: Parameters<typeof original.spawn>) => {
    spawned.calls++;
    const child = original.spawn(...args);
    spawned.exits.push(new Promise((exited) => child.once("exit", exited)));
    return child;
  }) as typeof original.spawn;
  return { ...original, spawn };
});
beforeEach(() => {
  spawned.calls = 0;
  spawned.exits = [];
});

const recorder = resolve("test/auth/fixtures/record-args.mjs");

/** What the recorder wrote, read once the process openUrl started has exited (openUrl does not wait for it). */
async function recorded(path: string): Promise<string[]> {
  expect(spawned.exits).toHaveLength(1);
  await spawned.exits[0];
  return JSON.parse(readFileSync(path, "utf8")) as string[];
}

function scratch() {
  const dir = scratchDir("cmb-open-");
  return { dir, argsFile: join(dir, "args.json"), marker: join(dir, "pwned") };
}

describe("openUrl refuses what is not an http(s) URL, without running anything", () => {
  const refused = [
    "file:///etc/passwd",
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox",
    "ftp://example.test/",
    "https://example.test/\nrm -rf ~",
    "https://example.test/a b",
    "https://user:pass@evil.test/",
    "https://trusted.test@evil.test/",
    "not a url",
  ];
  for (const url of refused) {
    it(`refuses ${JSON.stringify(url)}`, async () => {
      const { argsFile } = scratch();
      const env = { BROWSER: `node ${recorder}`, RECORD_ARGS_FILE: argsFile };
      await expect(openUrl(url, { env })).rejects.toBeInstanceOf(UnsafeUrlError);
      expect(spawned.calls).toBe(0);
      expect(existsSync(argsFile)).toBe(false);
    });
  }
});

describe("openUrl runs $BROWSER without a shell, with the URL as its last argument", () => {
  it("splits $BROWSER like a shell (quotes respected) and appends the URL", async () => {
    const { argsFile } = scratch();
    const env = { BROWSER: `node "${recorder}" --new-window 'two words'`, RECORD_ARGS_FILE: argsFile };
    await openUrl("https://example.test/authorize?client_id=a&state=b", { env });
    expect(spawned.calls).toBe(1);
    expect(await recorded(argsFile)).toEqual([
      "--new-window",
      "two words",
      "https://example.test/authorize?client_id=a&state=b",
    ]);
  });

  it("never executes shell metacharacters in the URL", async () => {
    const { argsFile, marker } = scratch();
    const url = `https://example.test/?q=$(touch%20${marker})&r=\`touch\${IFS}${marker}\`;touch\${IFS}${marker}|x`;
    await openUrl(url, { env: { BROWSER: `node ${recorder}`, RECORD_ARGS_FILE: argsFile } });
    const args = await recorded(argsFile);
    expect(args).toHaveLength(1);
    expect(args[0]).toBe(new URL(url).href);
    expect(existsSync(marker)).toBe(false);
  });

  it("never executes shell syntax in $BROWSER itself", async () => {
    const { argsFile, marker } = scratch();
    const env = {
      BROWSER: `node ${recorder} $(touch ${marker}) ; touch ${marker}`,
      RECORD_ARGS_FILE: argsFile,
    };
    await openUrl("https://example.test/", { env });
    const args = await recorded(argsFile);
    expect(args).toEqual(["$(touch", `${marker})`, ";", "touch", marker, "https://example.test/"]);
    expect(existsSync(marker)).toBe(false);
  });

  it("rejects with a clear error when the $BROWSER command does not exist", async () => {
    await expect(
      openUrl("https://example.test/", { env: { BROWSER: "/nonexistent/browser-binary" } }),
    ).rejects.toThrow(/Could not start the browser command from \$BROWSER/);
  });
});

describe("splitCommandWords", () => {
  const rows: [string, string[]][] = [
    ["firefox", ["firefox"]],
    ["  open  -a   Safari ", ["open", "-a", "Safari"]],
    [`"/Applications/My Browser" --x`, ["/Applications/My Browser", "--x"]],
    [`a 'b "c" d' e`, ["a", `b "c" d`, "e"]],
    [`a "b \\"c\\" \\$HOME" e`, ["a", `b "c" $HOME`, "e"]],
    [`a\\ b c`, ["a b", "c"]],
    [`echo $HOME ~ *`, ["echo", "$HOME", "~", "*"]],
    [`a ''`, ["a", ""]],
  ];
  for (const [input, words] of rows) {
    it(`${input} -> ${JSON.stringify(words)}`, () => {
      expect(splitCommandWords(input)).toEqual(words);
    });
  }
  it("refuses an unterminated quote", () => {
    expect(() => splitCommandWords(`a "b`)).toThrow(/unterminated/);
  });
});
