/** V8 tuning for a process that runs one command and ends (chat-cli, the bridge's account commands): on Node 20, end when the command does. */
import { createRequire } from "node:module";

let tuned = false;

/**
 * Node 20's V8 (11.3) compiles the platform fetch's HTTP parser (undici's llhttp, WebAssembly) with its baseline
 * compiler, then, once it has parsed an answer, with TurboFan on a background thread, and a Node process cannot end
 * before that compile does: `chat-cli list --json` printed its list at 176 ms and ended at 368 ms (a bare fetch in
 * `node -e`: the same). A command sends a few requests; the baseline code parses them as fast as it matters, so such a
 * process keeps the parser on it (`--liftoff-only`). Node 22 and later end without waiting; nothing is set there.
 *
 * Any V8 flag set at run time changes V8's flag hash, and Node then refuses its built-in code cache for every
 * built-in module loaded afterwards (30 ms more compiling on the fetch path). So fetch's implementation is loaded
 * first (reading `Response` loads it; ky has usually loaded it already). The bins run it through
 * `runBeforeFirstPlatformFetch`, so a command that sends no fetch request loads nothing for it; never in a long-lived
 * process (the relay, `chat-cli serve`) or the library. `node:v8` is required here, on Node 20 only: loading it took
 * 6 ms of a Node 24 start in a profile. Returns whether it tuned anything.
 */
export function tuneShortLivedV8(nodeMajor = Number(process.versions.node.split(".")[0])): boolean {
  if (tuned || nodeMajor !== 20) return false;
  tuned = true;
  void globalThis.Response;
  const v8: typeof import("node:v8") = createRequire(import.meta.url)("node:v8");
  v8.setFlagsFromString("--liftoff-only");
  return true;
}
