/**
 * The bench's modern-era MCP server: an SDK v2 `createMcpHandler` on node:http serving `get_chat` from a JSON file
 * of chats (argv[2]) to both eras, counting the requests of each era (GET /bench-stats); prints its URL as one JSON line.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

const chats = new Map(JSON.parse(readFileSync(process.argv[2], "utf8")).map((chat) => [chat.id, chat]));
const counts = { modern: 0, legacy: 0 };

const handler = createMcpHandler(({ era }) => {
  counts[era]++;
  const server = new McpServer({ name: "chat-mcp-bridge-bench-modern", version: "1.0.0" });
  server.registerTool(
    "get_chat",
    { description: "A chat by id", inputSchema: z.object({ chatId: z.string() }) },
    async ({ chatId }) => {
      const chat = chats.get(chatId);
      if (!chat) return { isError: true, content: [{ type: "text", text: `no chat ${chatId}` }] };
      return { content: [{ type: "text", text: JSON.stringify(chat) }], structuredContent: chat };
    },
  );
  return server;
});

/** Bodies are bounded (the handler's own 4 MiB cap applies again when it reads the Request). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

const http = createServer(async (incoming, outgoing) => {
  const url = new URL(incoming.url ?? "/", `http://${incoming.headers.host}`);
  if (url.pathname === "/bench-stats") {
    outgoing.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
    return;
  }
  const chunks = [];
  let size = 0;
  for await (const chunk of incoming) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      outgoing.writeHead(413).end();
      return;
    }
    chunks.push(chunk);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const hasBody = incoming.method !== "GET" && incoming.method !== "HEAD";
  const response = await handler.fetch(
    new Request(url, { method: incoming.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined }),
  );
  outgoing.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    outgoing.end();
    return;
  }
  for await (const chunk of response.body) outgoing.write(chunk);
  outgoing.end();
});
http.listen(0, "127.0.0.1", () => {
  const { port } = http.address();
  const url = `http://127.0.0.1:${port}`;
  process.stdout.write(`${JSON.stringify({ url, mcpUrl: `${url}/mcp` })}\n`);
});

const stop = () => {
  http.closeAllConnections();
  http.close(() => process.exit(0));
};
process.stdin.on("end", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
