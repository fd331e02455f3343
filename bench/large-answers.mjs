/**
 * Large answers (1, 8, 20 MB tool results) through our bridge beside mcp-remote and supergateway, and a direct SDK
 * client over HTTP as the baseline, in one run: median time per call and each relay's peak RSS.
 * Run alone: `node bench/large-answers.mjs [--rounds=3]`.
 */
import { createServer } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ensurePeers } from "./lib/peers.mjs";
import { readMemory } from "./lib/processes.mjs";
import { relaysFor, spawnRelay, stopRelay } from "./lib/relays.mjs";
import { nowMs, summarize } from "./lib/stats.mjs";

const SIZES_MB = [1, 8, 20];
const CALL_TIMEOUT_MS = 120_000;
const rounds = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice(9) ?? 3);

/** A stateless 2025-era MCP server answering in JSON: `blob { bytes }` returns a text of that many bytes. */
function startBlobServer() {
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
      if (message.method === "initialize")
        return answer({
          result: {
            protocolVersion: message.params.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "blob", version: "1.0.0" },
          },
        });
      if (message.method === "tools/list")
        return answer({
          result: {
            tools: [
              { name: "blob", inputSchema: { type: "object", properties: { bytes: { type: "number" } } } },
            ],
          },
        });
      if (message.method === "tools/call")
        return answer({
          result: { content: [{ type: "text", text: "x".repeat(message.params.arguments.bytes) }] },
        });
      answer({ error: { code: -32601, message: `no method ${message.method}` } });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, url: `http://127.0.0.1:${server.address().port}/mcp` }),
    ),
  );
}

const { server, url } = await startBlobServer();
const peers = ensurePeers({ progress: (text) => process.stderr.write(`${text}\n`) });
const results = new Map();
const record = (name, mb, ms, rssMiB) => {
  const key = `${name} ${mb} MB`;
  const entry = results.get(key) ?? { name, mb, times: [], rss: 0 };
  entry.times.push(ms);
  entry.rss = Math.max(entry.rss, rssMiB ?? 0);
  results.set(key, entry);
};

for (let round = 0; round < rounds; round++) {
  // The direct client: the MCP SDK over HTTP, no relay.
  const direct = new Client({ name: "bench", version: "1.0.0" });
  await direct.connect(new StreamableHTTPClientTransport(new URL(url)));
  for (const mb of SIZES_MB) {
    const started = nowMs();
    await direct.callTool({ name: "blob", arguments: { bytes: mb * 1_000_000 } });
    record("direct SDK client", mb, nowMs() - started);
  }
  await direct.close();
  for (const relay of relaysFor({ mcpUrl: url, configDir: "/tmp/cmb-bench-large", peers })) {
    const running = spawnRelay(relay);
    try {
      const initialized = await running.rpc.request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1.0.0" },
      });
      if (!initialized.result) throw new Error(`initialize failed: ${JSON.stringify(initialized.error)}`);
      running.rpc.notify("notifications/initialized");
      for (const mb of SIZES_MB) {
        const started = nowMs();
        // Bounded: a relay that drops an answer silently must not stall the run.
        const answer = await Promise.race([
          running.rpc.request("tools/call", { name: "blob", arguments: { bytes: mb * 1_000_000 } }),
          new Promise((_, reject) =>
            setTimeout(
              () => reject(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)),
              CALL_TIMEOUT_MS,
            ).unref(),
          ),
        ]);
        const ms = nowMs() - started;
        const whole = answer.result?.content?.[0]?.text?.length === mb * 1_000_000;
        record(relay.name, mb, whole ? ms : Number.NaN, readMemory(running.child.pid)?.peakRssMiB);
      }
    } catch (error) {
      for (const mb of SIZES_MB) record(relay.name, mb, Number.NaN);
      process.stderr.write(`${relay.name}: ${error.message}\n`);
    } finally {
      await stopRelay(running).catch(() => undefined);
    }
  }
}
server.close();

const directMedian = (mb) => summarize(results.get(`direct SDK client ${mb} MB`).times).median;
console.log("relay | size | median ms | x direct | peak RSS MiB");
for (const { name, mb, times, rss } of results.values()) {
  const failed = times.some(Number.isNaN);
  const p50 = failed ? Number.NaN : summarize(times).median;
  const ratio = failed ? "failed" : (p50 / directMedian(mb)).toFixed(2);
  console.log(
    `${name} | ${mb} MB | ${failed ? "failed" : p50.toFixed(0)} | ${ratio} | ${rss ? rss.toFixed(0) : "-"}`,
  );
}
