/** The MCP Inspector CLI, a one-shot host: one process (and one bridge) per request, from a client config file. */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import type { StdioServer } from "./host-libraries.js";

const INSPECTOR_BUILD = resolve(
  import.meta.dirname,
  "../../node_modules/@modelcontextprotocol/inspector-cli/build",
);

export interface InspectorRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The tool names of a `tools/list` answer (empty when stdout is not one). */
  tools: string[];
  elapsedMs: number;
}

/**
 * `mcp-inspector-cli --cli --config <dir>/mcp.json --server chat --method tools/list` (or any method arguments),
 * bounded by `timeoutMs`. The config is the README's `{"mcpServers":{"chat":{command,args,env}}}`.
 */
export function runInspector(dir: string, server: StdioServer, methodArgs: string[], timeoutMs = 120_000) {
  const config = join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { chat: server } }));
  const started = Date.now();
  return new Promise<InspectorRun>((done) => {
    execFile(
      process.execPath,
      [join(INSPECTOR_BUILD, "cli.js"), "--cli", "--config", config, "--server", "chat", ...methodArgs],
      {
        // It reads its own package.json relative to the working directory, and starts `node` from PATH.
        cwd: INSPECTOR_BUILD,
        env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}` },
        timeout: timeoutMs,
      },
      (error, stdout, stderr) => {
        let tools: string[] = [];
        try {
          const parsed = JSON.parse(stdout) as { tools?: { name: string }[] };
          tools = (parsed.tools ?? []).map((tool) => tool.name).sort();
        } catch {
          // Not a tools/list answer: the caller reads stdout and stderr.
        }
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        done({ code, stdout, stderr, tools, elapsedMs: Date.now() - started });
      },
    );
  });
}
