/** `--connect-timeout` and `--headers-timeout` on nodeHttpExchange: timers on a real socket (a TLS handshake that never ends, a server that never answers) are the subject (integration). */
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { describeError } from "../../../../src/bridge/log/log.js";
import { nodeHttpExchange } from "../../../../src/bridge/upstream/http/node-http-exchange.js";
import { withUpstreamTimeouts } from "../../../../src/bridge/upstream/http/time-outs.js";
import { classifyRequestFailure } from "../../../../src/internal/request-failure.js";

let servers: Array<Server | TcpServer> = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(
    servers.map((server) => {
      if ("closeAllConnections" in server) server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
  servers = [];
});

async function listening<T extends Server | TcpServer>(server: T): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const post = { method: "POST" as const, headers: { "content-type": "application/json" }, body: "{}" };

describe("--connect-timeout", () => {
  it("fails a connection whose TLS handshake never finishes, as never sent, naming the flag and the host", async () => {
    // Accepts the TCP connection and never says a word: the TLS handshake is part of connecting.
    const host = await listening(
      createTcpServer((socket) => {
        sockets.push(socket);
      }),
    );
    const fetch = withUpstreamTimeouts(nodeHttpExchange, { connectMs: 200 });
    const failure = await fetch(new URL(`https://${host}/mcp`), post).catch((error: unknown) => error);
    expect(describeError(failure)).toMatch(
      new RegExp(`could not connect to ${host} within 0.2 s \\(--connect-timeout\\)`),
    );
    expect(classifyRequestFailure(failure)).toBe("never-sent");
  });
});

describe("--headers-timeout", () => {
  it("fails a request the server takes but never answers, as maybe sent", async () => {
    const host = await listening(createHttpServer(() => {}));
    const fetch = withUpstreamTimeouts(nodeHttpExchange, { connectMs: 5000, headersMs: 200 });
    const failure = await fetch(new URL(`http://${host}/mcp`), post).catch((error: unknown) => error);
    expect(describeError(failure)).toMatch(
      new RegExp(`no answer from ${host} within 0.2 s of the request \\(--headers-timeout\\)`),
    );
    expect(classifyRequestFailure(failure)).toBe("maybe-sent");
  });

  it("0 (or absent) waits as long as the server takes", async () => {
    const host = await listening(
      createHttpServer((_request, response) => {
        setTimeout(() => response.end("late"), 300);
      }),
    );
    const fetch = withUpstreamTimeouts(nodeHttpExchange, { connectMs: 5000, headersMs: 0 });
    const answer = await fetch(new URL(`http://${host}/mcp`), post);
    expect(await answer.text()).toBe("late");
  });
});
