/** CPU profiles (`node --cpu-prof`) of the parts behind missed targets, summarized into the functions that dominate. */

import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { formatCpuSummary, summarizeCpuProfile } from "../lib/cpu-profile.mjs";
import { timeToExit } from "../lib/processes.mjs";
import { initializeRelay, relaysFor, spawnRelay, stopRelay } from "../lib/relays.mjs";
import { benchDir, childEnv, cliBin, seedChats, startServerChild } from "../lib/setup.mjs";
import { loadTest } from "./server.mjs";

/** Sampling every 100 µs: start-up and per-call costs are a few ms, too short for the default 1 ms. */
const cpuProfArgs = (dir, name) => [
  "--cpu-prof",
  `--cpu-prof-dir=${dir}`,
  `--cpu-prof-name=${name}`,
  "--cpu-prof-interval=100",
];

/** Profiles the parts behind the figures numbered in `figureNumbers` ("1"-"6"); returns `[{ area, file, summary, text }]`. */
export async function profileFigures({ server, bridgeContext, figureNumbers, dir }) {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) if (name.endsWith(".cpuprofile")) rmSync(join(dir, name));
  const profiles = [];
  const record = (area, name) => {
    const file = join(dir, name);
    const summary = summarizeCpuProfile(file);
    profiles.push({
      area,
      file: file.slice(benchDir.length - "bench/".length),
      summary,
      text: formatCpuSummary(`profile: ${area}`, summary),
    });
  };

  if (bridgeContext && (figureNumbers.has("1") || figureNumbers.has("3"))) {
    const [ours] = relaysFor(bridgeContext);
    const bridge = spawnRelay(ours, cpuProfArgs(dir, "bridge-start.cpuprofile"));
    await initializeRelay(bridge);
    await stopRelay(bridge);
    record("bridge start (spawn, initialize, tools/list, exit)", "bridge-start.cpuprofile");
  }
  if (bridgeContext && (figureNumbers.has("2") || figureNumbers.has("3"))) {
    const [ours] = relaysFor(bridgeContext);
    const bridge = spawnRelay(ours, cpuProfArgs(dir, "bridge-relay.cpuprofile"));
    await initializeRelay(bridge);
    const { chatIds } = bridgeContext;
    for (let index = 0; index < 1000; index++) {
      const chatId = chatIds[index % chatIds.length];
      await bridge.rpc.request("tools/call", { name: "get_chat", arguments: { chatId } });
    }
    await Promise.all(
      bridge.rpc.requestMany(
        Array.from({ length: 1000 }, (_, index) => ({
          method: "tools/call",
          params: { name: "get_chat", arguments: { chatId: chatIds[index % chatIds.length] } },
        })),
      ),
    );
    await stopRelay(bridge);
    record("bridge relay (1,000 sequential + 1,000 concurrent get_chat)", "bridge-relay.cpuprofile");
  }
  if (figureNumbers.has("4")) {
    const env = childEnv({
      CHAT_CONFIG_DIR: bridgeContext?.configDir ?? dir,
      CHAT_API_URL: server.url,
      CHAT_API_KEY: server.apiKeys.acme,
    });
    await timeToExit(process.execPath, [...cpuProfArgs(dir, "cli-version.cpuprofile"), cliBin, "--version"], {
      env,
    });
    record("chat-cli --version", "cli-version.cpuprofile");
    await timeToExit(
      process.execPath,
      [...cpuProfArgs(dir, "cli-list.cpuprofile"), cliBin, "list", "--json"],
      { env },
    );
    record("chat-cli list --json", "cli-list.cpuprofile");
  }
  if (figureNumbers.has("5")) {
    await profileChatClient(server, join(dir, "chat-client.cpuprofile"));
    record("ChatClient.getChat (2,000 calls, in process)", "chat-client.cpuprofile");
  }
  if (figureNumbers.has("6")) {
    const profiled = await startServerChild(
      join(benchDir, "server-child.mjs"),
      [],
      cpuProfArgs(dir, "server.cpuprofile"),
    );
    const [chatId] = await seedChats(profiled, 1);
    await loadTest({
      url: `${profiled.url}/v2/chats/${chatId}`,
      headers: { authorization: `Bearer ${profiled.apiKeys.acme}` },
      connections: 50,
      seconds: 3,
      warmupSeconds: 0,
    });
    await profiled.stop();
    record("reference server under GET /v2/chats/{id} load", "server.cpuprofile");
  }
  return profiles;
}

/** The in-process figure needs the inspector instead of the command-line flag. */
async function profileChatClient(server, file) {
  const { ChatClient } = await import("../../dist/index.js");
  const client = new ChatClient({ baseUrl: server.url, token: server.apiKeys.acme });
  const [chat] = (await client.listChats({ limit: 1 })).data;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  for (let index = 0; index < 2000; index++) await client.getChat(chat.id);
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  writeFileSync(file, JSON.stringify(profile));
}
