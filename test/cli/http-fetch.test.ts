/** chat-cli's node:http fetch answers ChatClient as the global fetch does: same results, same errors. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeHttpFetch } from "../../src/cli/http-fetch.js";
import { ChatClient, ConflictError } from "../../src/client/index.js";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

/** A loopback server whose answer each test chooses; it records what it received. */
async function startServer(handler: Handler): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => handler(req, body, res));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const echo: Handler = (req, body, res) => {
  res.setHeader("content-type", "application/json");
  res.setHeader("x-request-id", "req_1");
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
};

const servers: Server[] = [];
async function serve(handler: Handler): Promise<string> {
  const { url, server } = await startServer(handler);
  servers.push(server);
  return url;
}
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

/** Both fetches' answers reduced to what ChatClient reads. */
async function answerOf(fetcher: typeof nodeHttpFetch, url: string, init: RequestInit) {
  const response = await fetcher(url, init);
  const text = await response.text();
  return {
    ok: response.ok,
    status: response.status,
    requestId: response.headers.get("x-request-id"),
    contentType: response.headers.get("content-type"),
    text,
  };
}

const globalFetch = (url: string, init: RequestInit) => globalThis.fetch(url, init);

describe("answers: status, headers and body as fetch gives them", () => {
  it("a GET with headers", async () => {
    const url = await serve((req, _body, res) => {
      res.setHeader("content-type", "application/json");
      res.setHeader("x-request-id", "req_1");
      res.end(JSON.stringify({ authorization: req.headers.authorization, path: req.url }));
    });
    const init = () => ({
      method: "GET",
      headers: { Authorization: "Bearer t0k", accept: "application/json" },
    });
    expect(await answerOf(nodeHttpFetch, `${url}/v2/chats?limit=5`, init())).toEqual(
      await answerOf(globalFetch, `${url}/v2/chats?limit=5`, init()),
    );
  });

  it("a POST with a JSON body (UTF-8, content-length)", async () => {
    const url = await serve((req, body, res) => {
      res.statusCode = 201;
      res.end(
        JSON.stringify({ body, length: req.headers["content-length"], type: req.headers["content-type"] }),
      );
    });
    const init = () => ({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "café ☕" }),
    });
    expect(await answerOf(nodeHttpFetch, url, init())).toEqual(await answerOf(globalFetch, url, init()));
  });

  it("an error status with its body", async () => {
    const url = await serve((_req, _body, res) => {
      res.statusCode = 409;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ error: { code: "conflict", message: "moved on" } }));
    });
    const got = await answerOf(nodeHttpFetch, url, { method: "GET", headers: {} });
    expect(got).toEqual(await answerOf(globalFetch, url, { method: "GET", headers: {} }));
    expect(got).toMatchObject({ ok: false, status: 409 });
  });

  it("a gzip body the server sent unasked is decoded", async () => {
    const url = await serve((_req, _body, res) => {
      res.setHeader("content-encoding", "gzip");
      res.end(gzipSync(JSON.stringify({ object: "list" })));
    });
    expect((await answerOf(nodeHttpFetch, url, { headers: {} })).text).toBe(
      (await answerOf(globalFetch, url, { headers: {} })).text,
    );
  });

  it("a leading byte order mark is dropped, as text() does", async () => {
    const url = await serve((_req, _body, res) => res.end("\uFEFF{}"));
    expect((await answerOf(nodeHttpFetch, url, { headers: {} })).text).toBe("{}");
  });
});

describe("redirects are followed as fetch follows them", () => {
  it("307 keeps the method and body; 303 and 302-after-POST continue as GET without a body", async () => {
    const target = await serve(echo);
    for (const status of [307, 303, 302]) {
      const from = await serve((_req, _body, res) => {
        res.statusCode = status;
        res.setHeader("location", `${target}/next`);
        res.end();
      });
      const init = () => ({ method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      const mine = JSON.parse((await answerOf(nodeHttpFetch, from, init())).text);
      const theirs = JSON.parse((await answerOf(globalFetch, from, init())).text);
      expect({ method: mine.method, body: mine.body }).toEqual({ method: theirs.method, body: theirs.body });
    }
  });

  it("a redirect to another origin drops the authorization header", async () => {
    const target = await serve(echo);
    const from = await serve((_req, _body, res) => {
      res.statusCode = 302;
      res.setHeader("location", `${target.replace("127.0.0.1", "localhost")}/elsewhere`);
      res.end();
    });
    const received = JSON.parse(
      (await answerOf(nodeHttpFetch, from, { method: "GET", headers: { authorization: "Bearer t0k" } })).text,
    );
    expect(received.headers.authorization).toBeUndefined();
    expect(received.url).toBe("/elsewhere");
  });
});

describe("failures: fetch's errors, so ChatClient classifies them the same", () => {
  it("connection refused: TypeError 'fetch failed' with the socket error as cause", async () => {
    const { url, server } = await startServer(echo);
    await new Promise((done) => server.close(done));
    const mine = await nodeHttpFetch(url, { headers: {} }).catch((error: unknown) => error);
    const theirs = await globalFetch(url, { headers: {} }).catch((error: unknown) => error);
    expect(mine).toBeInstanceOf(TypeError);
    expect((mine as Error).message).toBe((theirs as Error).message);
    expect((mine as { cause: { code: string } }).cause.code).toBe("ECONNREFUSED");
    expect((theirs as { cause: { code: string } }).cause.code).toBe("ECONNREFUSED");
  });

  it("an abort while the answer is still coming rejects with the signal's reason", async () => {
    const url = await serve((_req, _body, res) => {
      res.write("{");
    });
    const controller = new AbortController();
    const pending = nodeHttpFetch(url, { headers: {}, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 50);
    await expect(pending).rejects.toThrow("stop");
  });

  it("ChatClient's timeout ends a call whose answer never completes", async () => {
    const url = await serve((_req, _body, res) => {
      res.write("{");
    });
    const client = new ChatClient({
      baseUrl: url,
      token: "t",
      fetch: nodeHttpFetch,
      timeoutMs: 200,
      maxRetries: 0,
    });
    await expect(client.getChat("chat_1")).rejects.toMatchObject({ name: "ChatTimeoutError" });
  });
});

describe("ChatClient through it against the reference server", () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startReferenceServer({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await server.close();
  });

  it("returns what ChatClient returns through fetch, and raises the same typed errors", async () => {
    const token = server.apiKeys.acme;
    const viaHttp = new ChatClient({ baseUrl: server.url, token, fetch: nodeHttpFetch });
    const viaFetch = new ChatClient({ baseUrl: server.url, token });
    const chat = await viaHttp.createChat({ message: "Add a database to my app" });
    expect(await viaHttp.getChat(chat.id)).toEqual(await viaFetch.getChat(chat.id));
    expect((await viaHttp.listChats()).data).toEqual((await viaFetch.listChats()).data);
    const task = { type: "confirmed-steps", connectedIntegrationNames: ["Other"] } as const;
    const mine = await viaHttp.resolveTask(chat.id, task).catch((error: unknown) => error);
    const theirs = await viaFetch.resolveTask(chat.id, task).catch((error: unknown) => error);
    expect(mine).toBeInstanceOf(ConflictError);
    expect(theirs).toBeInstanceOf(ConflictError);
    // Each request has its own id; everything else must match.
    const seen = (error: ConflictError) => ({
      status: error.status,
      code: error.code,
      body: JSON.parse(JSON.stringify(error.body).replaceAll(error.requestId ?? "-", "<id>")),
    });
    expect(seen(mine as ConflictError)).toEqual(seen(theirs as ConflictError));
    expect((mine as ConflictError).requestId).toMatch(/^req_/);
  });
});
