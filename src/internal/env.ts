/** Reads the environment where one exists and may be read: Node, Bun, Deno with `--allow-env`; nothing in browsers. */

/**
 * An environment variable, or undefined where there is no environment or it may not be read: no `process`
 * (browsers, workers), or Deno without `--allow-env` for it (asked first, so Deno never prompts or throws).
 */
export function envVar(name: string): string | undefined {
  const runtime = globalThis as {
    process?: { env?: Record<string, string | undefined> };
    Deno?: { permissions?: { querySync?(descriptor: { name: "env"; variable: string }): { state: string } } };
  };
  try {
    const query = runtime.Deno?.permissions?.querySync;
    if (query && query({ name: "env", variable: name }).state !== "granted") return undefined;
    return runtime.process?.env?.[name];
  } catch {
    return undefined;
  }
}
