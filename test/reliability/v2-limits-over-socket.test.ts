/**
 * Oversized bodies on a real connection (integration: node:http's framing is the subject): a declared 5 MiB body and
 * a chunked one past 1 MiB are answered 413 on the connection before they are read, and the server keeps serving.
 * The handler's refusals themselves are tested in-process in v2-limits-and-tenancy.test.ts.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReferenceServer, startReferenceServer } from "../../src/server/index.js";
import { WrittenChatSchema as ChatSchema } from "../server/written-shapes.js";
import { rawRequest } from "./fixtures/raw-http.js";
import { problemWithReply, snapshotAccount } from "./fixtures/wire-checks.js";

const MIB = 1024 * 1024;

describe("Oversized bodies on a connection: 413 payload_too_large, the connection is answered and the server keeps serving", () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startReferenceServer({ port: 0, rateLimit: false });
  });
  afterAll(() => server.close());

  const acme = () => [["Authorization", `Bearer ${server.apiKeys.acme}`] as [string, string]];

  it("a 5 MiB JSON body on create, send and resolve", async () => {
    const created = await fetch(`${server.url}/v2/chats`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKeys.acme}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "hi" }),
    });
    const chat = ChatSchema.parse(await created.json());
    const body = JSON.stringify({ message: "x".repeat(5 * MIB) });
    for (const path of [
      "/v2/chats",
      `/v2/chats/${chat.id}/messages`,
      `/v2/chats/${chat.id}/messages/resolve`,
    ]) {
      const reply = await rawRequest(server.url, {
        method: "POST",
        target: path,
        headers: [...acme(), ["Content-Type", "application/json"]],
        body,
      });
      expect(problemWithReply(reply, undefined, "POST")).toBeNull();
      expect(reply.status).toBe(413);
    }
  });

  it("a chunked body without Content-Length that grows past 1 MiB", async () => {
    const { hostname, port } = new URL(server.url);
    const reply = await new Promise<string>((resolve) => {
      const socket = connect({ host: hostname, port: Number(port) });
      let received = "";
      socket.on("data", (chunk) => {
        received += chunk.toString("latin1");
      });
      socket.on("error", () => {});
      socket.on("close", () => resolve(received));
      socket.write(
        `POST /v2/chats HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.apiKeys.acme}\r\n` +
          "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
      );
      const chunk = "a".repeat(64 * 1024);
      // Bounded: 40 chunks of 64 KiB (2.5 MiB); the server answers 413 before the end.
      for (let i = 0; i < 40 && !socket.destroyed; i++) {
        socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      }
      socket.write("0\r\n\r\n");
    });
    expect(reply).toMatch(/^HTTP\/1\.1 413 /);
    expect(reply).toContain('"payload_too_large"');
  });

  it("nothing of the refused bodies was stored, and the server still answers", async () => {
    const chats = await snapshotAccount(server, "acme");
    expect(
      [...chats.values()].every((chat) => chat.messages.every((m) => (m.content ?? "").length < MIB)),
    ).toBe(true);
    const list = await fetch(`${server.url}/v2/chats`, {
      headers: { authorization: `Bearer ${server.apiKeys.acme}` },
    });
    await list.body?.cancel();
    expect(list.status).toBe(200);
  });
});
