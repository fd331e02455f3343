/** Figure 4: wall time of `chat-cli --version` and `chat-cli list --json`, interleaved with `node -e 0`. */
import { timeToExit } from "../lib/processes.mjs";
import { childEnv, cliBin } from "../lib/setup.mjs";
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
  for (let run = 0; run < runs; run++) {
    floor.push((await timeToExit(process.execPath, ["-e", "0"], { env })).ms);
    version.push((await timeToExit(process.execPath, [cliBin, "--version"], { env })).ms);
    const listed = await timeToExit(process.execPath, [cliBin, "list", "--json"], { env });
    if (JSON.parse(listed.stdout).object !== "list") throw new Error("chat-cli list --json printed no list");
    list.push(listed.ms);
  }
  return { versionMs: summarize(version), listJsonMs: summarize(list), nodeFloorMs: summarize(floor) };
}
