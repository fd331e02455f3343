/**
 * Figure 6: requests per second on the reference server with autocannon, each beside a bare node:http server
 * sending the same bytes: `GET /v2/chats/{id}`, and `tools/call get_chat` on /mcp in each protocol era (the request
 * replayed is the one the SDK v2 client sent, recorded, with a fresh JSON-RPC id each time).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import autocannon from "autocannon";

function run(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/**
 * Runs autocannon on `url` and returns the mean requests/s and latency, checking every answer was a 2xx.
 * `post` (`{ body }`, a JSON-RPC request) is sent with a new id on every request.
 */
export async function loadTest({ url, headers, connections, seconds, warmupSeconds, post }) {
  let nextId = 1_000_000;
  const requests = post
    ? [
        {
          method: "POST",
          setupRequest: (request) => ({ ...request, body: JSON.stringify({ ...post.body, id: nextId++ }) }),
        },
      ]
    : undefined;
  const options = { url, headers, connections, requests };
  if (warmupSeconds > 0) await run({ ...options, duration: warmupSeconds });
  const result = await run({ ...options, duration: seconds });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0)
    throw new Error(`${bad} of ${result.requests.total} requests to ${new URL(url).pathname} failed`);
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    latencyMs: { median: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99 },
    connections,
    seconds,
  };
}

/**
 * Connects an SDK v2 client (legacy, or pinned to 2026-07-28) with a recording fetch and makes one `get_chat` call;
 * returns that request's headers and JSON body and the answer's bytes and content type. The connection is left
 * open (a legacy session stays valid for the replay) and returned to be closed.
 */
export async function recordToolCall({ mcpUrl, token, chatId, era }) {
  let recorded;
  const recordingFetch = async (url, init) => {
    const response = await fetch(url, init);
    const body = typeof init?.body === "string" ? safeJson(init.body) : undefined;
    if (body?.method === "tools/call") {
      recorded = {
        headers: Object.fromEntries(new Headers(init.headers)),
        body,
        contentType: response.headers.get("content-type") ?? "application/json",
        answer: await response.clone().text(),
      };
    }
    return response;
  };
  const versionNegotiation = era === "modern" ? { mode: { pin: "2026-07-28" } } : { mode: "legacy" };
  const client = new Client({ name: "chat-mcp-bridge-bench-load", version: "1.0.0" }, { versionNegotiation });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: recordingFetch,
    }),
  );
  await client.callTool({ name: "get_chat", arguments: { chatId } });
  if (!recorded) throw new Error("the SDK client sent no tools/call the bench could record");
  return { ...recorded, client };
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
