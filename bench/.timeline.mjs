import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { benchDir, bridgeBin, childEnv, signInBridge, startServerChild } from "./lib/setup.mjs";

const server = await startServerChild(join(benchDir, "server-child.mjs"), ["--mcp-era=legacy"]);
const configDir = mkdtempSync(join(os.tmpdir(), "tl-"));
await signInBridge(server, configDir);
const extra = process.argv.slice(2);
for (let round = 0; round < 8; round++) {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [...extra, bridgeBin, "--token-store", "file", "--debug", server.mcpUrl],
    { env: childEnv({ CHAT_CONFIG_DIR: configDir }), stdio: ["pipe", "pipe", "pipe"] },
  );
  const lines = [];
  child.stderr.on("data", (d) => {
    for (const l of String(d).split("\n"))
      if (l) lines.push(`${(performance.now() - t0).toFixed(1)} ${l.slice(0, 150)}`);
  });
  child.stdin.write(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    }) + "\n",
  );
  await new Promise((r) => child.stdout.once("data", r));
  const first = performance.now() - t0;
  child.kill();
  await new Promise((r) => child.once("exit", r));
  if (round === 7) console.log(lines.join("\n"));
  console.log("first answer", first.toFixed(1));
}
server.child?.kill?.();
process.exit(0);
