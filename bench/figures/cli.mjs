/**
 * Figure 4: wall time of `chat-cli --version` and `chat-cli list --json`, interleaved with `node -e 0` and with the
 * floor under `list --json` (bench/floor-cli-child.cjs: one fetch, printed).
 */
import { join } from "node:path";
import { timeToExit } from "../lib/processes.mjs";
import { benchDir, childEnv, cliBin } from "../lib/setup.mjs";
import { summarize } from "../lib/stats.mjs";

export async function measureCli({ server, configDir, runs }) {
  // The API key goes in the environment, not argv, so it never shows in process listings.
  const env = childEnv({
    CHAT_CONFIG_DIR: configDir,
    CHAT_API_URL: server.url,
    CHAT_API_KEY: server.apiKeys.acme,
  });
  const version = [];
  const list = [];
  const floor = [];
  const fetchFloor = [];
  const fetchFloorScript = join(benchDir, "floor-cli-child.cjs");
  for (let run = 0; run < runs; run++) {
    floor.push((await timeToExit(process.execPath, ["-e", "0"], { env })).ms);
    const fetched = await timeToExit(process.execPath, [fetchFloorScript], { env });
    if (JSON.parse(fetched.stdout).object !== "list") throw new Error("the fetch floor printed no list");
    fetchFloor.push(fetched.ms);
    version.push((await timeToExit(process.execPath, [cliBin, "--version"], { env })).ms);
    const listed = await timeToExit(process.execPath, [cliBin, "list", "--json"], { env });
    if (JSON.parse(listed.stdout).object !== "list") throw new Error("chat-cli list --json printed no list");
    list.push(listed.ms);
  }
  return {
    versionMs: summarize(version),
    listJsonMs: summarize(list),
    nodeFloorMs: summarize(floor),
    fetchFloorMs: summarize(fetchFloor),
  };
}
