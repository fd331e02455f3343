import { join } from "node:path"; import os from "node:os"; import { mkdtempSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { startServerChild, seedChats, benchDir, childEnv } from "./lib/setup.mjs";
const server = await startServerChild(join(benchDir, "server-child.mjs"));
await seedChats(server, 3);
const dir = mkdtempSync(join(os.tmpdir(), "p27ab-"));
const env = childEnv({ CHAT_CONFIG_DIR: dir, CHAT_API_URL: server.url, CHAT_API_KEY: server.apiKeys.acme });
const variants = process.argv.slice(3);
const args = process.argv[2].split(" ");
const res = Object.fromEntries(variants.map((v) => [v, { wall: [], cpu: [] }]));
res.node = { wall: [], cpu: [] };
for (let i = 0; i < 12; i++) for (const v of ["node", ...variants]) {
  const cmd = v === "node" ? ["-e", "0"] : [`dist/${v}/chat-cli.js`, ...args];
  const r = spawnSync("/usr/bin/time", ["-f", "%e %U %S", process.execPath, ...cmd], { env, encoding: "utf8" });
  const [wall, u, s] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  res[v].wall.push(wall); res[v].cpu.push(u + s);
}
const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const [v, r] of Object.entries(res)) console.log(v, "wall", med(r.wall), "cpu", med(r.cpu).toFixed(2), "cpu ratio", (med(r.cpu) / med(res.node.cpu)).toFixed(2));
await server.stop();
