/** The time-outs through the relay: the client's error names the time-out and the host. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type InProcessRelay, startRelayInProcess } from "../support/relay-in-process.js";
import { initializeLine } from "./fixtures/spawn-bridge.js";

let server: Server | undefined;
let relay: InProcessRelay | undefined;
afterEach(async () => {
  await relay?.end();
  relay = undefined;
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe("--headers-timeout through the relay", () => {
  it("a server that takes the request and never answers: the client's error names --headers-timeout and the host", async () => {
    server = createServer(() => {});
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    relay = await startRelayInProcess(["--headers-timeout", "0.3", `http://${host}/mcp`]);
    relay.send(initializeLine(1));
    const answer = await relay.waitFor((message) => message.id === 1);
    expect(JSON.stringify(answer.error)).toContain(
      `no answer from ${host} within 0.3 s of the request (--headers-timeout)`,
    );
  });
});
