/** `$BROWSER` as each platform's users write it: POSIX shell words, Windows paths, `.cmd` openers through cmd.exe. */
import type { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { openUrl, splitCommandWords } from "../../src/auth/index.js";
import { browserInvocation, resolveWindowsCommand } from "../../src/auth/open-url.js";

const files = (...paths: string[]) => {
  const set = new Set(paths.map((path) => path.toLowerCase()));
  return (path: string) => set.has(path.toLowerCase());
};
const windowsEnv = { PATH: "C:\\Windows\\system32;C:\\Users\\me\\bin", PATHEXT: ".COM;.EXE;.BAT;.CMD" };

describe("splitCommandWords on Windows: backslashes are path separators, double quotes group", () => {
  const rows: [string, string[]][] = [
    ["C:\\Users\\me\\bin\\open.exe", ["C:\\Users\\me\\bin\\open.exe"]],
    [
      `"C:\\Program Files\\Mozilla Firefox\\firefox.exe" -new-tab`,
      ["C:\\Program Files\\Mozilla Firefox\\firefox.exe", "-new-tab"],
    ],
    [`opener "say ""hi""" 'x y'`, ["opener", `say "hi"`, "'x", "y'"]],
    [`\\\\server\\share\\open.cmd`, ["\\\\server\\share\\open.cmd"]],
  ];
  for (const [input, words] of rows) {
    it(`${input} -> ${JSON.stringify(words)}`, () => {
      expect(splitCommandWords(input, "win32")).toEqual(words);
    });
  }
  it("refuses an unterminated quote", () => {
    expect(() => splitCommandWords(`"C:\\a b`, "win32")).toThrow(/unterminated/);
  });
  it("keeps POSIX rules elsewhere (a backslash escapes)", () => {
    expect(splitCommandWords("a\\ b", "darwin")).toEqual(["a b"]);
  });
});

describe("browserInvocation on Windows", () => {
  const href = "https://auth.example.test/authorize?a=1&b=%25PATH%25^x|y";

  it("runs an .exe directly, without a shell, the URL last", () => {
    const isFile = files("C:\\Users\\me\\bin\\open.exe");
    expect(
      browserInvocation("C:\\Users\\me\\bin\\open.exe --new", href, {
        platform: "win32",
        env: windowsEnv,
        isFile,
      }),
    ).toEqual({ command: "C:\\Users\\me\\bin\\open.exe", args: ["--new", href] });
  });

  it("takes an unquoted path with spaces as one command when it names a file", () => {
    const path = "C:\\Program Files\\Browser\\browser.exe";
    expect(
      browserInvocation(path, href, { platform: "win32", env: windowsEnv, isFile: files(path) }),
    ).toEqual({
      command: path,
      args: [href],
    });
  });

  it("starts a .cmd opener through cmd.exe /d /s /c with every cmd metacharacter escaped", () => {
    const isFile = files("C:\\Users\\me\\bin\\open.cmd");
    const invocation = browserInvocation("open", href, {
      platform: "win32",
      env: { ...windowsEnv, ComSpec: "C:\\Windows\\system32\\cmd.exe" },
      isFile,
    });
    expect(invocation.command).toBe("C:\\Windows\\system32\\cmd.exe");
    expect(invocation.windowsVerbatimArguments).toBe(true);
    expect(invocation.args.slice(0, 3)).toEqual(["/d", "/s", "/c"]);
    const line = invocation.args[3]!;
    expect(line).toBe(
      '"C:\\Users\\me\\bin\\open.cmd ^"https://auth.example.test/authorize^?a=1^&b=^%25PATH^%25^^x^|y^""',
    );
    // Outside the outer quotes /s strips, no metacharacter is left without its caret.
    expect(line.slice(1, -1).replace(/\^./g, "")).not.toMatch(/[&|<>^%"()!]/);
  });

  it("escapes a .bat path with spaces and its arguments too", () => {
    const bat = "C:\\My Tools\\open.bat";
    const invocation = browserInvocation(`"${bat}" "two words"`, "https://x.test/", {
      platform: "win32",
      env: windowsEnv,
      isFile: files(bat),
    });
    expect(invocation.command).toBe("cmd.exe");
    expect(invocation.args[3]).toBe('"C:\\My^ Tools\\open.bat ^"two^ words^" ^"https://x.test/^""');
  });
});

describe("resolveWindowsCommand finds what cmd.exe would run", () => {
  it("a bare name on %PATH% with a %PATHEXT% extension", () => {
    expect(resolveWindowsCommand("code", windowsEnv, files("C:\\Users\\me\\bin\\code.cmd"))).toBe(
      "C:\\Users\\me\\bin\\code.cmd",
    );
  });
  it("a path without its extension", () => {
    expect(resolveWindowsCommand("D:\\apps\\open", windowsEnv, files("D:\\apps\\open.bat"))).toBe(
      "D:\\apps\\open.bat",
    );
  });
  it("the name as given when nothing matches (spawn reports it)", () => {
    expect(resolveWindowsCommand("firefox", windowsEnv, files())).toBe("firefox");
  });
});

describe("openUrl on Windows starts the opener as browserInvocation says", () => {
  it("passes cmd.exe's line verbatim and never through a shell", async () => {
    const calls: { command: string; args: readonly string[]; options: object }[] = [];
    const fakeSpawn = ((command: string, args: readonly string[], options: object) => {
      calls.push({ command, args, options });
      const child = Object.assign(new EventEmitter(), { unref: () => {}, exitCode: null });
      queueMicrotask(() => child.emit("spawn"));
      return child;
    }) as unknown as typeof spawn;
    await openUrl("https://x.test/?a=1&b=2", {
      env: { ...windowsEnv, BROWSER: "open" },
      platform: { platform: "win32", isFile: files("C:\\Users\\me\\bin\\open.cmd") },
      spawnOpener: fakeSpawn,
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.command).toBe("cmd.exe");
    expect(calls[0]!.options).toMatchObject({ shell: false, windowsVerbatimArguments: true });
  });
});

describe("an opener that fails where the device code can take over", () => {
  it("shows no loopback link on stderr (the device code's URL is the one that works)", async () => {
    const { presentSignInUrl } = await import("../../src/auth/sign-in-prompt.js");
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const shown = await presentSignInUrl("http://127.0.0.1:20000/start/abc", {
        openBrowser: true,
        env: { PATH: process.env.PATH ?? "", BROWSER: "false" },
        authTimeoutMs: 60_000,
        log: () => {},
        deviceCodeFallback: true,
      });
      expect(shown).toBe("device-code");
    } finally {
      process.stderr.write = write;
    }
    expect(written.join("")).not.toContain("/start/abc");
    expect(written.join("")).toContain("device code instead");
  });
});
