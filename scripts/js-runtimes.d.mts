export function ensureRuntime(runtime: "bun" | "deno"): { path: string; reason?: undefined } | { path?: undefined; reason: string };
