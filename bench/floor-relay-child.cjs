/**
 * The floor under figure 1: the least any stdio relay does before its first answer, as cheaply as Node allows (one
 * CommonJS file, built-ins only): read a stored login (argv[3], a file holding the bearer token), hash the server URL
 * (argv[2]) as a login key, POST each stdin line to the server over node:http (keeping its session id) and write the
 * JSON-RPC answer, from a JSON or an SSE body, as one stdout line. No SDK, no validation, no sign-in, no retries.
 */
const { request } = require("node:http");
const { createHash } = require("node:crypto");
const { readFileSync } = require("node:fs");

const url = new URL(process.argv[2]);
const token = readFileSync(process.argv[3], "utf8").trim();
createHash("sha256").update(url.href).digest("hex");
let sessionId;
let buffered = "";

process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (line.trim()) post(line);
  }
});

function post(line) {
  const headers = {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
    ...(sessionId ? { "mcp-session-id": sessionId } : {}),
  };
  const outgoing = request(url, { method: "POST", headers }, (answer) => {
    sessionId = answer.headers["mcp-session-id"] ?? sessionId;
    let body = "";
    answer.setEncoding("utf8");
    answer.on("data", (chunk) => {
      body += chunk;
    });
    answer.on("end", () => {
      const json = answer.headers["content-type"]?.startsWith("text/event-stream")
        ? body
            .split("\n")
            .filter((field) => field.startsWith("data:"))
            .map((field) => field.slice(5).trim())
            .join("")
        : body;
      if (json) process.stdout.write(`${json}\n`);
    });
  });
  outgoing.end(line);
}
