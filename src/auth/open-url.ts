/** The one browser opener of the package: http(s) URLs only, `$BROWSER` run without a shell, else the `open` package. */
import { type ChildProcess, spawn } from "node:child_process";
import { environmentWithoutSecrets, redactForTerminal, secretVariablesIn } from "../internal/redact.js";
import { type BrowserInvocation, type BrowserPlatform, browserInvocation } from "./browser-command.js";
import { checkShownUrl } from "./shown-url.js";

export { splitCommandWords } from "./browser-command.js";

/** Parses `url` and refuses anything a browser should not be handed (the one check of `shown-url.ts`). */
export function assertBrowsableUrl(url: string): URL {
  return new URL(checkShownUrl(url, "URL to open").href);
}

/**
 * Opens `url` in the user's browser. `$BROWSER`, when set, is run directly (never through a shell) with the URL
 * as its last argument, as gh and xdg-open do; otherwise the `open` package picks the platform's opener.
 * Resolves once the opener has started (and, with `confirmMs`, has not failed within that time); rejects when the
 * URL is refused or no opener could be started.
 * The browser never inherits this package's secrets (API key, client secret, variables `--header` names).
 */
export async function openUrl(
  url: string,
  opts: {
    env?: NodeJS.ProcessEnv;
    /** Also wait up to this long for the opener to fail (a non-zero exit: no browser, no display) before resolving. */
    confirmMs?: number;
    /** Another platform's rules for `$BROWSER` (tests), and the spawn that starts it. */
    platform?: Omit<BrowserPlatform, "env">;
    spawnOpener?: typeof spawn;
    /** Told when the opener exits (whenever that is, while this process runs). */
    onExit?: () => void;
  } = {},
): Promise<void> {
  const href = assertBrowsableUrl(url).href;
  const env = environmentWithoutSecrets(opts.env ?? process.env);
  const browser = env.BROWSER?.trim();
  if (browser) {
    const invocation = browserInvocation(browser, href, { ...opts.platform, env });
    const opener = await spawnDetached(invocation, env, opts.spawnOpener ?? spawn);
    if (opts.onExit) opener.child.once("exit", opts.onExit);
    if (opts.confirmMs)
      await notFailedWithin(
        opener.child,
        opts.confirmMs,
        `the $BROWSER command (${invocation.command})`,
        opener.said,
      );
    return;
  }
  const { default: open } = await import("open");
  // `open` spawns with process.env and takes no environment: the secrets leave it while the opener starts.
  const hidden = secretVariablesIn(process.env).map((name) => [name, process.env[name]] as const);
  for (const [name] of hidden) delete process.env[name];
  let child: ChildProcess;
  try {
    child = await open(href, { wait: false });
  } finally {
    for (const [name, value] of hidden) process.env[name] = value;
  }
  child.on("error", () => {});
  if (opts.onExit) child.once("exit", opts.onExit);
  if (opts.confirmMs) await notFailedWithin(child, opts.confirmMs, "the system's URL opener", () => "");
}

/**
 * Openers such as xdg-open exit at once, with a non-zero code when they found no browser; some stay until the
 * browser closes. A failure within `ms` rejects (with the first line the opener wrote on stderr); an exit 0 or a
 * process still running resolves.
 */
function notFailedWithin(child: ChildProcess, ms: number, what: string, said: () => string): Promise<void> {
  if (child.exitCode !== null)
    return child.exitCode === 0 ? Promise.resolve() : Promise.reject(failed(child.exitCode));
  return new Promise((resolve, reject) => {
    // Not unref'd: the opener is, so this timer keeps the process up to hear its exit.
    const timer = setTimeout(done, ms);
    child.once("exit", (code) => {
      clearTimeout(timer);
      // Its last words may still be in the pipe; a program it started may hold the pipe open, so not for long.
      const stderr = child.stderr;
      if (code === 0 || !stderr || stderr.readableEnded) return done(code);
      const late = setTimeout(() => done(code), 200);
      stderr.once("end", () => {
        clearTimeout(late);
        done(code);
      });
    });
    function done(code?: number | null) {
      clearTimeout(timer);
      if (code === undefined || code === 0) resolve();
      else reject(failed(code));
    }
  });
  function failed(code: number | null): Error {
    const line = said();
    return new Error(
      `${what} found no browser to open it (exit ${code ?? "by signal"}${line ? `: ${line}` : ""})`,
    );
  }
}

/** The most of an opener's stderr kept, for the one line a failure quotes. */
const OPENER_STDERR_BYTES = 1024;

/**
 * Runs the opener with no terminal output of its own: stdout may be a protocol stream (the bridge) and its
 * progress meters and warnings are noise on stderr. Its stderr is read (and drained, so a browser that keeps
 * writing never blocks) and its first line kept, sanitised, for the message when it fails.
 */
function spawnDetached(
  { command, args, windowsVerbatimArguments }: BrowserInvocation,
  env: NodeJS.ProcessEnv,
  start: typeof spawn,
): Promise<{ child: ChildProcess; said: () => string }> {
  return new Promise((resolve, reject) => {
    const child = start(command, args, {
      shell: false,
      stdio: ["ignore", "ignore", "pipe"],
      env,
      ...(windowsVerbatimArguments ? { windowsVerbatimArguments } : {}),
    });
    let kept = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      if (kept.length < OPENER_STDERR_BYTES) kept += chunk.slice(0, OPENER_STDERR_BYTES - kept.length);
    });
    child.stderr?.on("error", () => {});
    const said = () => {
      const line = kept.split(/\r?\n/).find((text) => text.trim() !== "") ?? "";
      return redactForTerminal(line.trim()).slice(0, 200);
    };
    child.once("error", (error) =>
      reject(new Error(`Could not start the browser command from $BROWSER (${command}): ${error.message}`)),
    );
    child.once("spawn", () => {
      child.unref();
      // The pipe would keep this process up as long as a long-lived browser runs.
      (child.stderr as { unref?: () => void } | null)?.unref?.();
      resolve({ child, said });
    });
  });
}
