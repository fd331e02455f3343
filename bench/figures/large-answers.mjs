/**
 * Figure 11: large messages. Tool results of 1, 8 and 20 MB and an 8 MB tool argument, through our bridge and the
 * peers, beside a direct SDK v2 client over HTTP, all against one stateless 2025-era server in this process; each
 * relay's peak RSS. A relay that drops or cuts a message is recorded as failed, with its reason.
 */
import { createServer } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { readMemory } from "../lib/processes.mjs";
import { relaysFor, spawnRelay, stopRelay } from "../lib/relays.mjs";
import { nowMs, summarize } from "../lib/stats.mjs";

export const RESULT_SIZES_MB = [1, 8, 20];
export const ARGUMENT_MB = 8;
const CALL_TIMEOUT_MS = 120_000;

/** The calls of one round: each result size, then the large argument; `check` says whether the answer is whole. */
const CALLS = [
  ...RESULT_SIZES_MB.map((mb) => ({
    key: `${mb} MB result`,
    params: { name: "blob", arguments: { bytes: mb * 1_000_000 } },
    check: (result) => result?.content?.[0]?.text?.length === mb * 1_000_000,
  })),
  {
    key: `${ARGUMENT_MB} MB argument`,
    params: { name: "measure", arguments: { text: "y".repeat(ARGUMENT_MB * 1_000_000) } },
    check: (result) => result?.content?.[0]?.text === String(ARGUMENT_MB * 1_000_000),
  },
];

/** A stateless 2025-era MCP server answering in JSON: `blob { bytes }` returns that many bytes, `measure { text }` its length. */
function startLargeServer() {
  const server = createServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (message.id === undefined) return void res.writeHead(202).end();
      const answer = (body) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, ...body }));
      };
      const text = (value) => answer({ result: { content: [{ type: "text", text: value }] } });
      if (message.method === "initialize")
        return answer({
          result: {
            protocolVersion: message.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "large", version: "1.0.0" },
          },
        });
      if (message.method === "tools/list")
        return answer({
          result: {
            tools: [
              { name: "blob", inputSchema: { type: "object", properties: { bytes: { type: "number" } } } },
              { name: "measure", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
            ],
          },
        });
      if (message.method === "tools/call" && message.params.name === "blob")
        return text("x".repeat(message.params.arguments.bytes));
      if (message.method === "tools/call" && message.params.name === "measure")
        return text(String(message.params.arguments.text.length));
      answer({ error: { code: -32601, message: `no method ${message.method}` } });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, url: `http://127.0.0.1:${server.address().port}/mcp` }),
    ),
  );
}

function bounded(promise) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${CALL_TIMEOUT_MS / 1000} s`)),
        CALL_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * `{ directMs: { [call]: summary }, relays: { [name]: { ms: { [call]: summary }, failed: { [call]: reason },
 * peakRssMB } } }` over `rounds` rounds, relays in turn.
 */
export async function measureLargeAnswers({ peers, configDir, rounds = 3 }) {
  const { server, url } = await startLargeServer();
  const direct = Object.fromEntries(CALLS.map(({ key }) => [key, []]));
  const relays = {};
  try {
    for (let round = 0; round < rounds; round++) {
      const client = new Client({ name: "bench", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        for (const call of CALLS) {
          const started = nowMs();
          const result = await bounded(client.callTool(call.params));
          if (!call.check(result)) throw new Error(`the direct client's ${call.key} came back cut`);
          direct[call.key].push(nowMs() - started);
        }
      } finally {
        await client.close();
      }
      for (const relay of relaysFor({ mcpUrl: url, configDir, peers })) {
        const entry = (relays[relay.name] ??= { times: {}, failed: {}, peakRssMB: 0 });
        const running = spawnRelay(relay);
        try {
          const initialized = await bounded(
            running.rpc.request("initialize", {
              protocolVersion: "2025-06-18",
              capabilities: {},
              clientInfo: { name: "bench", version: "1.0.0" },
            }),
          );
          if (!initialized.result) throw new Error(`initialize failed: ${JSON.stringify(initialized.error)}`);
          running.rpc.notify("notifications/initialized");
          for (const call of CALLS) {
            if (entry.failed[call.key]) continue;
            const started = nowMs();
            try {
              const answer = await bounded(running.rpc.request("tools/call", call.params));
              const ms = nowMs() - started;
              if (!call.check(answer.result))
                throw new Error(
                  answer.error ? `error ${answer.error.code}: ${answer.error.message}` : "cut short",
                );
              (entry.times[call.key] ??= []).push(ms);
            } catch (error) {
              entry.failed[call.key] = String(error.message ?? error).slice(0, 120);
            }
            entry.peakRssMB = Math.max(entry.peakRssMB, readMemory(running.child.pid)?.peakRssMiB ?? 0);
          }
        } catch (error) {
          for (const call of CALLS) entry.failed[call.key] ??= String(error.message ?? error).slice(0, 120);
        } finally {
          await stopRelay(running).catch(() => undefined);
        }
      }
    }
  } finally {
    server.close();
  }
  return {
    calls: CALLS.map(({ key }) => key),
    directMs: Object.fromEntries(Object.entries(direct).map(([key, times]) => [key, summarize(times)])),
    relays: Object.fromEntries(
      Object.entries(relays).map(([name, { times, failed, peakRssMB }]) => [
        name,
        {
          ms: Object.fromEntries(Object.entries(times).map(([key, samples]) => [key, summarize(samples)])),
          failed,
          peakRssMB,
        },
      ]),
    ),
  };
}
