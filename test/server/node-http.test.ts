/** The node:http edge of the fetch handler over a real socket, its subject (integration): streaming without buffering, every Set-Cookie, the client's address, client aborts reaching the handler and the body. */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type FetchHandler, toNodeListener } from "../../src/server/node-http.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function serve(handle: FetchHandler): Promise<string> {
  let origin = "";
  server = createServer(toNodeListener(handle, () => origin));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return origin;
}

describe("the node edge", () => {
  it("sends each chunk as it comes (an event stream is not buffered until it ends)", async () => {
    let finish: () => void = () => {};
    const url = await serve(async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("data: first\n\n"));
          finish = () => {
            controller.enqueue(new TextEncoder().encode("data: last\n\n"));
            controller.close();
          };
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const response = await fetch(url);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe("data: first\n\n");
    finish();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: last\n\n");
  });

  it("keeps every Set-Cookie apart and passes the raw request target", async () => {
    let seenTarget = "";
    const url = await serve(async (_request, _ip, rawTarget) => {
      seenTarget = rawTarget;
      const headers = new Headers();
      headers.append("set-cookie", "a=1");
      headers.append("set-cookie", "b=2");
      return new Response("ok", { headers });
    });
    // node:http, not fetch: fetch folds the dot segments before sending.
    const cookies = await new Promise<string[] | undefined>((resolve, reject) => {
      const { port } = new URL(url);
      request({ host: "127.0.0.1", port, path: "/v2/chats/%2e%2e?x=1" }, (res) => {
        res.resume();
        resolve(res.headers["set-cookie"]);
      })
        .on("error", reject)
        .end();
    });
    expect(cookies).toEqual(["a=1", "b=2"]);
    expect(seenTarget).toBe("/v2/chats/%2e%2e?x=1");
  });

  it("hands the handler the address the client connected from (what the per-client limits count by)", async () => {
    let seenAddress = "";
    const url = await serve(async (_request, clientIp) => {
      seenAddress = clientIp;
      return new Response("ok");
    });
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const { port } = new URL(url);
      request({ host: "127.0.0.1", port, path: "/", localAddress: "127.0.0.2" }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
        .on("error", reject)
        .end();
    });
    expect(status).toBe(200);
    expect(seenAddress).toBe("127.0.0.2");
  });

  it("a client that goes away aborts the request's signal and cancels the response body", async () => {
    let aborted!: () => void;
    const signalAborted = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    let cancelled!: () => void;
    const bodyCancelled = new Promise<void>((resolve) => {
      cancelled = resolve;
    });
    const url = await serve(async (request) => {
      request.signal.addEventListener("abort", () => aborted());
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(": open\n\n"));
        },
        cancel() {
          cancelled();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const controller = new AbortController();
    const response = await fetch(url, { signal: controller.signal });
    await response.body!.getReader().read();
    controller.abort();
    await Promise.all([signalAborted, bodyCancelled]);
  });

  it("a request whose handler throws gets a JSON 500 without details", async () => {
    const url = await serve(async () => {
      throw new Error("secret detail");
    });
    const original = console.error;
    console.error = () => {};
    try {
      const response = await fetch(url);
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(text).not.toContain("secret detail");
      expect(JSON.parse(text).error.code).toBe("internal");
    } finally {
      console.error = original;
    }
  });
});
