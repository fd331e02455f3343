#!/usr/bin/env node
/**
 * The command the conformance suite starts for each client scenario: hands the scenario (its name, the suite's
 * server URL, the last argument, and the context in its env) to the test's driver (test/conformance-client/driver.ts,
 * listening on 127.0.0.1:CONFORMANCE_DRIVER_PORT), which spawns and drives chat-mcp-bridge; prints the bridge's
 * output and exits with the driver's code. One SDK and one driver for every scenario instead of one per scenario.
 */
import { connect } from "node:net";

const request = {
  scenario: process.env.MCP_CONFORMANCE_SCENARIO ?? "",
  serverUrl: process.argv.at(-1),
  context: process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {},
  driver: process.env.CONFORMANCE_DRIVER === "modern" ? "modern" : "legacy",
  cell: process.env.CONFORMANCE_CELL ?? "",
};
const socket = connect(Number(process.env.CONFORMANCE_DRIVER_PORT), "127.0.0.1");
socket.setEncoding("utf8");
let answer = "";
socket.on("data", (chunk) => {
  answer += chunk;
});
socket.on("error", (error) => {
  process.stderr.write(`conformance client: the driver did not answer: ${error.message}\n`);
  process.exit(1);
});
socket.on("end", () => {
  const { exitCode, output } = JSON.parse(answer);
  process.stderr.write(output);
  process.exit(exitCode);
});
socket.write(`${JSON.stringify(request)}\n`);
