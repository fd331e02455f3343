/**
 * The baseline for the server figure: bare node:http answering every request with a fixed body (argv[2], a file)
 * of content type argv[3] (JSON by default), after reading the request body.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const body = readFileSync(process.argv[2]);
const contentType = process.argv[3] ?? "application/json; charset=utf-8";
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.writeHead(200, { "content-type": contentType, "content-length": body.length });
    response.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.stdin.on("end", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
process.stdin.resume();
